module github.com/neardup/neardup/bench

go 1.26.8

require github.com/neardup/neardup v0.0.0

require (
	github.com/dgryski/go-minhash v0.0.0-20170608043002-7fe510aff544 // indirect
	github.com/ekzhu/minhash-lsh v0.0.0-20171225071031-5c06ee8586a1 // indirect
	github.com/jotfs/fastcdc-go v0.2.0 // indirect
	github.com/klauspost/cpuid/v2 v2.0.12 // indirect
	github.com/restic/chunker v0.4.0 // indirect
	github.com/zeebo/blake3 v0.2.4 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/neardup/neardup => ../
