package lsh_test

import (
	"fmt"

	"github.com/neardup/neardup/lsh"
)

// Collapse a ranked result list: results 0 and 2 are near-duplicates (their
// samples agree except in one place), so 2 collapses into 0; 1 is unlike
// both; 3 was never put in the table.
func ExampleCollapseTable() {
	ct, err := lsh.NewCollapseTable(lsh.Bing()) // 6 × 16 bits, 4 of 6 must agree
	if err != nil {
		panic(err)
	}
	a, b, c := make([]uint64, 30), make([]uint64, 30), make([]uint64, 30)
	for i := range a {
		a[i], b[i], c[i] = uint64(i), uint64(i+100), uint64(i)
	}
	c[7] = 1000 // one band of six differs
	ct.Put(10, a)
	ct.Put(11, b)
	ct.Put(12, c)
	ranked := []uint64{10, 11, 12, 13}
	for i, into := range ct.Collapse(nil, ranked) {
		switch {
		case into == lsh.Unknown:
			fmt.Println(ranked[i], "unknown, kept")
		case into == i:
			fmt.Println(ranked[i], "kept")
		default:
			fmt.Println(ranked[i], "collapsed into", ranked[into])
		}
	}
	fmt.Println(ct.Params().Bytes(), "signature bytes per document")
	// Output:
	// 10 kept
	// 11 kept
	// 12 collapsed into 10
	// 13 unknown, kept
	// 12 signature bytes per document
}

func ExampleChooseCollapse() {
	c, err := lsh.ChooseCollapse(lsh.CollapseOptions{Threshold: 0.9, MaxSamples: 128})
	if err != nil {
		panic(err)
	}
	p := c.Params
	fmt.Println(p)
	fmt.Printf("P(0.8)=%.3f P(0.9)=%.3f P(0.95)=%.3f\n", p.Prob(0.8), p.Prob(0.9), p.Prob(0.95))
	// Output:
	// k=90 r=15 b=6 m=2 keybits=16
	// P(0.8)=0.017 P(0.9)=0.359 P(0.95)=0.852
}
