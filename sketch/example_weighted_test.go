package sketch_test

import (
	"fmt"
	"math"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
)

// Two HMT sketches whose first scales differ (5 and 6) are compared block
// by block at the scales both hold, 6 and 7: all 4 bins of scale 6 agree,
// 2 of the 3 non-empty bins of scale 7.
func ExampleJaccard_hmt() {
	p := sketch.HMTParams{Alpha: 0.5, Tau: 1, Scales: 3, L: 4}
	h := sketch.Header{Algorithm: sketch.HMTDep, Version: 1, K: 2 + 3*4, Bits: 64, Params: p.Pack()}
	E := sketch.HMTEmpty
	a := &sketch.Sketch{Header: h, Values: []uint64{5, math.Float64bits(10), // s = 5, W = 2^10
		1, 2, 3, 4, 10, 11, 12, 13, 20, 21, E, 23}}
	b := &sketch.Sketch{Header: h, Values: []uint64{6, math.Float64bits(10.5), // s = 6, W = 2^10.5
		10, 11, 12, 13, 20, 99, E, 23, 5, 6, 7, 8}}
	e, _ := sketch.Jaccard(a, b)
	fmt.Printf("%.4f ± %.4f over %d scales, below α: %v\n", e.J, e.StdErr, e.Scales, e.Below)
	b.Values[1] = math.Float64bits(12) // W = 2^12: weight ratio 1/4 < α
	e, _ = sketch.Jaccard(a, b)
	fmt.Printf("below α = %v: %v, bound %v\n", e.Alpha, e.Below, e.J)
	// Output:
	// 0.8333 ± 0.1361 over 2 scales, below α: false
	// below α = 0.5: true, bound 0.25
}

// The HMT parameters are packed into Header.Params.
func ExampleHMTParams_Pack() {
	p := sketch.HMTParams{Alpha: 0.5, Tau: 1, Scales: 3, L: 4}
	fmt.Println(p.Validate(), fmt.Sprintf("%#x", p.Pack()))
	// Output: <nil> 0x400c1800000
}

func ExampleHeader_HMT() {
	h, _ := weighted.NewHMT(weighted.Options{K: 256}) // defaults α = 0.5, τ = 1, t = 3, L = 4
	p, bins, err := h.Header().HMT()
	fmt.Printf("%+v %d %v\n", p, bins, err)
	// Output: {Alpha:0.5 Tau:1 Scales:3 L:4 BinaryBeta:false} 128 <nil>
}

func ExampleAlgorithm_SlotWise() {
	for _, a := range []sketch.Algorithm{sketch.MinHash, sketch.BottomK, sketch.ICWS, sketch.HMT} {
		fmt.Println(a, a.SlotWise())
	}
	// Output:
	// minhash true
	// bottomk false
	// icws true
	// hmt false
}

// For an HMT sketch, Cardinality is the total weight it records.
func ExampleCardinality_weighted() {
	h, _ := weighted.NewHMT(weighted.Options{K: 64})
	fs := []feature.Feature{{ID: 1, Weight: 2.5}, {ID: 2, Weight: 0.25}, {ID: 3, Weight: 1}}
	w, err := sketch.Cardinality(&sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, fs)})
	fmt.Printf("%.6g %v\n", w, err)
	// Output: 3.75 <nil>
}
