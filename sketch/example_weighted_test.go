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

// An HMT sketch compressed to 2 bits per bin (HMT section 3.3 with Li and
// König's b-bit hashing): the first scale and the total weight stay full
// words, so the compressed sketches still compare scale by scale, and the
// estimator corrects for the 1-in-4 chance matches.
func ExampleCompressHMT() {
	h, _ := weighted.NewHMT(weighted.Options{K: 256, Seed: 1})
	a, b := hmtPair()
	sa, _ := sketch.CompressHMT(&sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, a)}, 2)
	sb, _ := sketch.CompressHMT(&sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, b)}, 2)
	enc, _ := sa.MarshalBinary()
	e, _ := sketch.Jaccard(sa, sb)
	fmt.Printf("exact %.2f, 2-bit estimate %.2f ± %.2f, %d bytes\n", weighted.Jaccard(a, b), e.J, e.StdErr, len(enc))
	// Output: exact 0.88, 2-bit estimate 0.86 ± 0.02, 159 bytes
}

// The ½-bit sketch: one bit per pair of bins (the XOR of the two bins,
// remixed); each scale estimates J², and the estimate is its square root.
func ExampleCompressHMTPairs() {
	h, _ := weighted.NewHMT(weighted.Options{K: 256, Seed: 1})
	a, b := hmtPair()
	sa, _ := sketch.CompressHMTPairs(&sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, a)}, 1)
	sb, _ := sketch.CompressHMTPairs(&sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, b)}, 1)
	e, _ := sketch.Jaccard(sa, sb)
	fmt.Printf("½-bit: %d values, estimate %.2f ± %.2f\n", len(sa.Values), e.J, e.StdErr)
	// Output: ½-bit: 194 values, estimate 0.90 ± 0.02
}

// Algorithm 3.4 as written: with t = 10 scales and τ = 3, a set and its
// copy at 0.4 times the weight (J = 0.4 < α) still share 6 scales, so
// AsWritten estimates where the default rule only says "below α".
func ExampleJaccardHMT() {
	h, _ := weighted.NewHMT(weighted.Options{K: 224, Seed: 1, Scales: 10, Tau: 3})
	a, _ := hmtPair()
	b := make([]feature.Feature, len(a))
	for i, f := range a {
		b[i] = feature.Feature{ID: f.ID, Weight: 0.4 * f.Weight}
	}
	sa := &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, a)}
	sb := &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, b)}
	d, _ := sketch.Jaccard(sa, sb)
	w, _ := sketch.JaccardHMT(sa, sb, sketch.HMTOptions{AsWritten: true, Weighted: true})
	fmt.Printf("default: below α %v (bound %.2f); as written: %.2f ± %.2f over %d scales\n", d.Below, d.J, w.J, w.StdErr, w.Scales)
	// Output: default: below α true (bound 0.40); as written: 0.37 ± 0.04 over 6 scales
}

// One scale alone (the single-scale variant of HMT section 5): bins of
// scale 0 for both sets, compressed to 1 bit and compared by BinsJaccard.
func ExampleBinsJaccard() {
	h, _ := weighted.NewHMT(weighted.Options{K: 128, Seed: 1, Scales: 2, Tau: 1})
	a, b := hmtPair()
	ba, bb := h.SketchScale(nil, a, 0), h.SketchScale(nil, b, 0)
	full, _ := sketch.BinsJaccard(ba, bb, 64, false)
	ca, _ := sketch.CompressBins(nil, ba, h.Header().Seed, 0, 1, false)
	cb, _ := sketch.CompressBins(nil, bb, h.Header().Seed, 0, 1, false)
	one, _ := sketch.BinsJaccard(ca, cb, 1, false)
	fmt.Printf("%d bins: full %.2f ± %.2f, 1-bit %.2f ± %.2f\n", len(ba), full.J, full.StdErr, one.J, one.StdErr)
	// Output: 128 bins: full 0.84 ± 0.03, 1-bit 0.84 ± 0.05
}

// hmtPair returns two weighted sets of 200 features, the second a perturbed
// copy of the first.
func hmtPair() (a, b []feature.Feature) {
	for i := range 200 {
		w := 1 + float64(i%17)
		a = append(a, feature.Feature{ID: uint64(i)*0x9e3779b97f4a7c15 + 1, Weight: w})
		if i%10 != 0 {
			b = append(b, feature.Feature{ID: uint64(i)*0x9e3779b97f4a7c15 + 1, Weight: w * (0.95 + 0.1*float64(i%3)/2)})
		}
	}
	return a, b
}

// CompressBins keeps b bits of a remix of each bin keyed by the scale
// number: equal bins stay equal, an empty bin is remixed like any value.
func ExampleCompressBins() {
	bins := []uint64{7, 7, sketch.HMTEmpty, 9}
	c, _ := sketch.CompressBins(nil, bins, 1, 5, 8, false)
	p, _ := sketch.CompressBins(nil, bins, 1, 5, 1, true)
	fmt.Println(len(c), c[0] != c[1] || c[0] < 256, len(p))
	// Output: 4 true 2
}

// Footnote 1 of HMT section 3.2: β = 2^(−1/m) instead of α^(1/τ).
func ExampleHMTParams_BinaryBetaM() {
	p := sketch.HMTParams{Alpha: 0.75, Tau: 1, Scales: 3, L: 4, BinaryBeta: true}
	fmt.Printf("m = %d, log2(1/β) = %.2f, %v\n", p.BinaryBetaM(), p.Log2InvBeta(), p.Validate())
	// Output: m = 3, log2(1/β) = 0.33, <nil>
}
