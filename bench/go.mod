module github.com/neardup/neardup/bench

go 1.26.8

require github.com/neardup/neardup v0.0.0

replace github.com/neardup/neardup => ../
