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

func ExampleNewCollapseTable() {
	// The table keeps at most 16 bits per supershingle.
	_, err := lsh.NewCollapseTable(lsh.AltaVista()) // 64-bit keys
	fmt.Println(err != nil)
	ct, err := lsh.NewCollapseTable(lsh.Bing())
	fmt.Println(err, ct.Len(), ct.Params())
	// Output:
	// true
	// <nil> 0 k=30 r=5 b=6 m=4 keybits=16
}

// CollapseFunc lets the owner verify each proposed pair, for example with
// the Jaccard estimate of the full sketches against the threshold.
func ExampleCollapseTable_CollapseFunc() {
	ct, _ := lsh.NewCollapseTable(lsh.Bing())
	a, b := make([]uint64, 30), make([]uint64, 30)
	for i := range a {
		a[i], b[i] = uint64(i), uint64(i)
	}
	b[7] = 1000
	ct.Put(1, a)
	ct.Put(2, b)
	ct.Put(3, a)
	ranked := []uint64{1, 2, 3}
	reject2 := func(i, j int) (bool, error) { return ranked[i] != 2, nil } // 2 fails the check
	into, err := ct.CollapseFunc(nil, ranked, reject2)
	fmt.Println(into, err)
	// Output: [0 1 0] <nil>
}

// An owner fetches the signatures the table lacks from its store before
// collapsing: Missing lists them, Signature and PutSignature move them.
func ExampleCollapseTable_Missing() {
	ct, _ := lsh.NewCollapseTable(lsh.Bing())
	samples := make([]uint64, 30)
	ct.Put(1, samples)
	missing := ct.Missing(nil, []uint64{1, 2, 3, 2})
	fmt.Println(missing, ct.Has(1), ct.Has(2))
	for _, id := range missing {
		sig, _ := ct.Signature(nil, samples) // stored with the document
		ct.PutSignature(id, sig)
	}
	fmt.Println(ct.Missing(nil, []uint64{1, 2, 3}), ct.Len())
	// Output:
	// [2 3] true false
	// [] 3
}

func ExampleCollapseTable_Match() {
	ct, _ := lsh.NewCollapseTable(lsh.Bing()) // 4 of 6 must agree
	a := []uint16{1, 2, 3, 4, 5, 6}
	fmt.Println(ct.Match(a, []uint16{1, 2, 3, 4, 0, 0}), ct.Match(a, []uint16{1, 2, 3, 0, 0, 0}))
	// Output: true false
}

func ExampleCollapseTable_Get() {
	ct, _ := lsh.NewCollapseTable(lsh.Bing())
	samples := make([]uint64, 30)
	ct.Put(7, samples)
	sig, ok := ct.Get(nil, 7)
	want, _ := ct.Signature(nil, samples)
	fmt.Println(ok, len(sig), ct.Match(sig, want))
	_, ok = ct.Get(nil, 8)
	fmt.Println(ok)
	// Output:
	// true 6 true
	// false
}

func ExampleCollapseTable_Remove() {
	ct, _ := lsh.NewCollapseTable(lsh.Bing())
	ct.Put(7, make([]uint64, 30))
	fmt.Println(ct.Remove(7), ct.Remove(7), ct.Len(), ct.Bytes() >= 0)
	// Output: true false 0 true
}

func ExampleCollapseTable_Put() {
	ct, _ := lsh.NewCollapseTable(lsh.Bing())
	fmt.Println(ct.Put(1, make([]uint64, 30)))
	fmt.Println(ct.Put(2, make([]uint64, 29)) != nil, ct.Len()) // too few samples: nothing stored
	// Output:
	// <nil>
	// true 1
}

// An owner that verifies the pairs against a store reads the signatures
// once, fetches what the table lacks, reads the documents of every pair
// that may be proposed at once, and collapses over the same signatures.
func ExampleCollapseTable_CollapseSignatures() {
	ct, _ := lsh.NewCollapseTable(lsh.Bing())
	a, b := make([]uint64, 30), make([]uint64, 30)
	for i := range a {
		a[i], b[i] = uint64(i), uint64(i)
	}
	b[7] = 1000 // one supershingle differs
	ct.Put(1, a)
	ct.Put(2, b)
	ranked := []uint64{1, 9, 2}
	sigs, has := ct.Signatures(nil, nil, ranked)
	fmt.Println(has)
	ct.MatchingPairs(sigs, has, func(i, j int) { fmt.Println("may propose", ranked[i], ranked[j]) })
	into, err := ct.CollapseSignatures(nil, ranked, sigs, has, nil)
	fmt.Println(into, err)
	// Output:
	// [true false true]
	// may propose 2 1
	// [0 -1 0] <nil>
}

// Signatures reads the signatures of a list once; an id the table does not
// hold gets B zeros and has false.
func ExampleCollapseTable_Signatures() {
	ct, _ := lsh.NewCollapseTable(lsh.Params{R: 1, B: 2, M: 1, KeyBits: 16})
	ct.PutSignature(7, []uint16{10, 20})
	sigs, has := ct.Signatures(nil, nil, []uint64{7, 8})
	fmt.Println(sigs, has)
	// Output: [10 20 0 0] [true false]
}

// MatchingPairs lists the pairs a collapse of the list may propose: an
// owner that verifies them reads their documents in one lookup.
func ExampleCollapseTable_MatchingPairs() {
	ct, _ := lsh.NewCollapseTable(lsh.Params{R: 1, B: 2, M: 1, KeyBits: 16})
	ct.PutSignature(1, []uint16{10, 20})
	ct.PutSignature(2, []uint16{11, 20}) // agrees with 1 on one value
	ct.PutSignature(3, []uint16{12, 21})
	ids := []uint64{1, 2, 3}
	sigs, has := ct.Signatures(nil, nil, ids)
	ct.MatchingPairs(sigs, has, func(i, j int) { fmt.Println(ids[i], "and", ids[j]) })
	// Output: 2 and 1
}
