package weighted_test

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
)

// The samplers plug into the index and CLI as sample.Sampler.
var (
	_ sample.Sampler = (*weighted.CWS)(nil)
	_ sample.Sampler = (*weighted.ICWS)(nil)
	_ sample.Sampler = (*weighted.HMT)(nil)
)

// Two documents as weighted term sets (e.g. TF-IDF).
var (
	docA = []feature.Feature{{ID: 1, Weight: 3.0}, {ID: 2, Weight: 1.5}, {ID: 3, Weight: 0.2}, {ID: 4, Weight: 2.0}}
	docB = []feature.Feature{{ID: 1, Weight: 2.5}, {ID: 2, Weight: 1.5}, {ID: 3, Weight: 0.4}, {ID: 5, Weight: 0.5}}
)

func ExampleJaccard() {
	fmt.Printf("%.4f\n", weighted.Jaccard(docA, docB))
	// Output: 0.5676
}

func ExampleNewCWS() {
	c, err := weighted.NewCWS(weighted.Options{K: 4096, Seed: 1})
	if err != nil {
		panic(err)
	}
	a := &sketch.Sketch{Header: c.Header(), Values: c.Sketch(nil, docA)}
	b := &sketch.Sketch{Header: c.Header(), Values: c.Sketch(nil, docB)}
	e, _ := sketch.Jaccard(a, b)
	fmt.Printf("estimate within 4 SE of the exact 0.5676: %v\n", math.Abs(e.J-0.5676) < 4*e.StdErr)
	// Output: estimate within 4 SE of the exact 0.5676: true
}

func ExampleCWS_Samples() {
	c, _ := weighted.NewCWS(weighted.Options{K: 3, Seed: 1})
	for _, s := range c.Samples(nil, docA) {
		fmt.Printf("feature %d, 0 < y ≤ S(x): %v\n", s.ID, s.Y > 0 && s.Y <= map[uint64]float64{1: 3, 2: 1.5, 3: 0.2, 4: 2}[s.ID])
	}
	// Output:
	// feature 4, 0 < y ≤ S(x): true
	// feature 1, 0 < y ≤ S(x): true
	// feature 4, 0 < y ≤ S(x): true
}

func ExampleCWS_Count() {
	c, _ := weighted.NewCWS(weighted.Options{K: 256})
	fs := make([]feature.Feature, 1000)
	for i := range fs {
		fs[i] = feature.Feature{ID: uint64(i), Weight: 1}
	}
	n := c.Count(fs)
	fmt.Printf("inversions per sample ≈ ln 1000 + 0.58: %v\n", math.Abs(float64(n.Inversions)/256-7.49) < 1)
	// Output: inversions per sample ≈ ln 1000 + 0.58: true
}

func ExampleNewICWS() {
	c, _ := weighted.NewICWS(weighted.Options{K: 4096, Seed: 1})
	a, b := c.Sketch(nil, docA), c.Sketch(nil, docB)
	eq := 0
	for i := range a {
		if a[i] == b[i] {
			eq++
		}
	}
	fmt.Printf("%.2f\n", float64(eq)/4096)
	// Output: 0.57
}

func ExampleNewReplicated() {
	r, _ := weighted.NewReplicated(weighted.Options{K: 2, Seed: 1})
	fmt.Println(r.Samples(nil, []feature.Feature{{ID: 7, Weight: 3}}))
	// Output: [{7 2 0.6931471805599453} {7 3 1.0986122886681096}]
}

func ExampleNewHMT() {
	h, _ := weighted.NewHMT(weighted.Options{K: 256, Seed: 1}) // α = 0.5, τ = 1, t = 3, L = 4
	a := &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, docA)}
	b := &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, docB)}
	r, _ := weighted.EstimateJaccard(a, b)
	fmt.Println(len(a.Values), h.Bins(), r.Below, r.Scales, math.Abs(r.J-0.5676) < 4*r.StdErr)
	// Output: 386 128 false 3 true
}

func ExampleEstimateJaccard() {
	h, _ := weighted.NewHMT(weighted.Options{K: 256, Seed: 1})
	heavy := make([]feature.Feature, len(docA))
	for i, f := range docA {
		heavy[i] = feature.Feature{ID: f.ID, Weight: 10 * f.Weight}
	}
	a := &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, docA)}
	b := &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, heavy)}
	r, _ := weighted.EstimateJaccard(a, b)
	fmt.Printf("below α = %v: %v\n", r.Alpha, r.Below) // J = 0.1 < α
	// Output: below α = 0.5: true
}

func ExampleHMT_Reduce() {
	h, _ := weighted.NewHMT(weighted.Options{K: 4, L: 1})
	s, _ := h.Scale(docA)
	fmt.Println(s, len(h.Reduce(nil, docA, s)) >= 1)
	// Output: -1 true
}

func ExampleReduceToUnwtd() {
	es := weighted.ReduceToUnwtd(nil, []feature.Feature{{ID: 9, Weight: 2.5}}, 1)
	fmt.Println(len(es) == 2 || len(es) == 3, es[0], es[1])
	// Output: true {9 1} {9 2}
}

func ExampleReduceToUnwtdDep() {
	es := weighted.ReduceToUnwtdDep(nil, []feature.Feature{{ID: 9, Weight: 3}}, 1)
	fmt.Println(es)
	// Output: [{9 1} {9 2} {9 3}]
}

func ExampleCWS_LogWeights() {
	// Samplers are built by sample.New (one constructor for every
	// sampler); sample.Make sets a weighted sketch's Size to the exact
	// total weight (TotalWeight, as LogWeights says to read the weights).
	c, _ := sample.New(sample.Config{Algorithm: sketch.CWS, K: 256, Seed: 1})
	fmt.Println(c.(*weighted.CWS).LogWeights())
	a, b := sample.Make(c, docA), sample.Make(c, docB)
	// CWS values carry no weight: Make's Size supplies it to Containment,
	// which estimates Σmin/|A|₁ = 4.2/6.7.
	e, _ := sketch.Containment(a, b)
	fmt.Println(a.Size, b.Size, math.Abs(e.J-4.2/6.7) < 4*e.StdErr)
	// Output:
	// false
	// 6.7 4.9 true
}

func ExampleTotalWeight() {
	fmt.Println(weighted.TotalWeight(docA, false), weighted.TotalWeight([]feature.Feature{{ID: 1, Weight: 0}}, true))
	// Output: 6.7 1
}

func ExampleJaccardSorted() {
	a := []feature.Feature{{ID: 1, Weight: 2}, {ID: 2, Weight: 1}}
	b := []feature.Feature{{ID: 1, Weight: 1}, {ID: 3, Weight: 1}}
	fmt.Printf("%.2f\n", weighted.JaccardSorted(a, b)) // (1) / (2 + 1 + 1)
	// Output: 0.25
}

func ExampleCWS_Sketch() {
	c, _ := weighted.NewCWS(weighted.Options{K: 64, Seed: 1})
	var buf []uint64
	buf = c.Sketch(buf[:0], docA) // reuse buf across documents
	fmt.Println(len(buf), c.K(), c.Header().Algorithm)
	// Weights that are all zero (absent) give no values.
	buf = c.Sketch(buf[:0], []feature.Feature{{ID: 1, Weight: 0}})
	fmt.Println(len(buf))
	// Output:
	// 64 64 cws
	// 0
}

func ExampleICWS_Sketch() {
	// Consistent: the same set gets the same samples in every sketch.
	c, _ := weighted.NewICWS(weighted.Options{K: 256, Seed: 1})
	h := c.Header()
	a := &sketch.Sketch{Header: h, Values: c.Sketch(nil, docA)}
	b := &sketch.Sketch{Header: h, Values: c.Sketch(nil, docA)}
	e, _ := sketch.Jaccard(a, b)
	fmt.Println(h.Algorithm, c.K(), e.J)
	// Output: icws 256 1
}

func ExampleICWS_Samples() {
	c, _ := weighted.NewICWS(weighted.Options{K: 2, Seed: 3})
	for _, s := range c.Samples(nil, []feature.Feature{{ID: 7, Weight: 4}}) {
		fmt.Println(s.ID, s.Y > 0 && s.Y <= 4)
	}
	// Output:
	// 7 true
	// 7 true
}

// With LogWeights, a weight is given as its natural logarithm: the sketch
// of the same set is the same, and weights beyond float64's range can be
// sampled.
func ExampleICWS_LogWeights() {
	plain, _ := weighted.NewICWS(weighted.Options{K: 8, Seed: 1})
	logw, _ := weighted.NewICWS(weighted.Options{K: 8, Seed: 1, LogWeights: true})
	ln := make([]feature.Feature, len(docA))
	for i, f := range docA {
		ln[i] = feature.Feature{ID: f.ID, Weight: math.Log(f.Weight)}
	}
	a, b := plain.Sketch(nil, docA), logw.Sketch(nil, ln)
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	fmt.Println(logw.LogWeights(), same, "of 8 equal")
	huge := logw.Sketch(nil, []feature.Feature{{ID: 1, Weight: 5000}}) // w = e^5000
	fmt.Println(len(huge))
	// Output:
	// true 8 of 8 equal
	// 8
}

// An HMT sketch holds the first scale, log₂ of the total weight, and t
// blocks of B one-permutation bins.
func ExampleHMT_Sketch() {
	h, _ := weighted.NewHMT(weighted.Options{K: 64, Seed: 1}) // t = 3, τ = 1: B = 64/2
	v := h.Sketch(nil, docA)
	s, log2W := h.Scale(docA)
	fmt.Println(len(v), h.Len(), h.Bins(), h.Alpha())
	fmt.Println(int64(v[0]) == int64(s), math.Float64frombits(v[1]) == log2W)
	fmt.Println(len(h.Sketch(nil, nil)))
	// Output:
	// 98 98 32 0.5
	// true true
	// 0
}

func ExampleHMT_Estimate() {
	h, _ := weighted.NewHMT(weighted.Options{K: 256, Seed: 1})
	r, err := h.Estimate(h.Sketch(nil, docA), h.Sketch(nil, docA))
	fmt.Println(r.J, r.Below, r.Scales, err)
	_, err = h.Estimate(make([]uint64, 5), h.Sketch(nil, docA))
	fmt.Println(errors.Is(err, weighted.ErrSketchLength))
	// Output:
	// 1 false 3 <nil>
	// true
}

func ExampleHMT_Scale() {
	// The first scale is ⌈log₂(L·K/((t−τ)|w|₁))⌉ (β = α = 0.5): ten times
	// the weight lowers it by about log₂ 10 ≈ 3.3. An empty set has total
	// weight 0.
	h, _ := weighted.NewHMT(weighted.Options{K: 256})
	heavy := make([]feature.Feature, len(docA))
	for i, f := range docA {
		heavy[i] = feature.Feature{ID: f.ID, Weight: 10 * f.Weight}
	}
	s1, w1 := h.Scale(docA)
	s2, w2 := h.Scale(heavy)
	fmt.Printf("%d %.3f\n%d %.3f\n", s1, w1, s2, w2)
	_, w0 := h.Scale(nil)
	fmt.Println(w0)
	// Output:
	// 7 2.744
	// 3 6.066
	// -Inf
}

func ExampleReplicated_Sketch() {
	// The exact reference: integer weights become unit copies.
	r, _ := weighted.NewReplicated(weighted.Options{K: 2048, Seed: 1})
	a := []feature.Feature{{ID: 1, Weight: 3}, {ID: 2, Weight: 1}}
	b := []feature.Feature{{ID: 1, Weight: 2}, {ID: 2, Weight: 2}}
	va, vb := r.Sketch(nil, a), r.Sketch(nil, b)
	eq := 0
	for i := range va {
		if va[i] == vb[i] {
			eq++
		}
	}
	// Σmin/Σmax = 3/5.
	fmt.Println(r.K(), math.Abs(float64(eq)/2048-0.6) < 0.05)
	// Output: 2048 true
}

// SketchScale sketches one scale alone: the block of that scale number in
// any full HMT sketch that holds it.
func ExampleHMT_SketchScale() {
	h, _ := weighted.NewHMT(weighted.Options{K: 64, Seed: 1})
	fs := []feature.Feature{{ID: 1, Weight: 2.5}, {ID: 2, Weight: 1}}
	v := h.Sketch(nil, fs)
	s := int(int64(v[0]))
	blk := h.SketchScale(nil, fs, s)
	fmt.Println(len(blk) == h.Bins(), slices.Equal(blk, v[2:2+h.Bins()]))
	// Output: true true
}

func ExampleNewIntCWS() {
	c, err := weighted.NewIntCWS(weighted.Options{K: 4096, Seed: 1})
	if err != nil {
		panic(err)
	}
	// Term counts; 3e9 copies cost no more than 3.
	a := []feature.Feature{{ID: 1, Weight: 3}, {ID: 2, Weight: 1}, {ID: 4, Weight: 3e9}}
	b := []feature.Feature{{ID: 1, Weight: 2}, {ID: 2, Weight: 1}, {ID: 4, Weight: 1e9}, {ID: 5, Weight: 1}}
	sa, sb := c.Samples(nil, a), c.Samples(nil, b)
	same := 0
	for i := range sa {
		if sa[i] == sb[i] {
			same++
		}
	}
	fmt.Printf("exact %.4f, estimate %.4f\n", weighted.Jaccard(a, b), float64(same)/float64(len(sa)))
	fmt.Println(sa[0].ID, sa[0].Copy >= 1 && sa[0].Copy <= 3e9)
	// Output:
	// exact 0.3333, estimate 0.3416
	// 4 true
}

func ExampleHMT_SketchScaleChunked() {
	// HMT section 3.3: one scale, 128 bins, 22-bit chunks (7 + 13 + 2).
	h, _ := weighted.NewHMT(weighted.Options{K: 256, Seed: 1})
	a := []feature.Feature{{ID: 1, Weight: 300}, {ID: 2, Weight: 500}, {ID: 3, Weight: 200}}
	b := []feature.Feature{{ID: 1, Weight: 300}, {ID: 2, Weight: 400}, {ID: 3, Weight: 200}}
	x, _ := h.SketchScaleChunked(nil, a, 0, 2)
	y, _ := h.SketchScaleChunked(nil, b, 0, 2)
	e, _ := sketch.BinsJaccard(x, y, 2, false)
	fmt.Printf("%d bins of 2 bits; weighted Jaccard %.2f, estimate %.2f\n", len(x), weighted.Jaccard(a, b), e.J)
	// Output: 128 bins of 2 bits; weighted Jaccard 0.90, estimate 0.90
}
