package weighted

import (
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
)

// roundedJaccard is the exact Jaccard of the unweighted sets that HMT
// rounds fs and gs to at scale i: Σmin/Σmax of the copy counts.
func roundedJaccard(h *HMT, fs, gs []feature.Feature, i int) float64 {
	count := func(x []feature.Feature) map[uint64]float64 {
		c := map[uint64]float64{}
		for _, e := range h.Reduce(nil, x, i) {
			c[e.ID]++
		}
		return c
	}
	ca, cb := count(fs), count(gs)
	var mn, mx float64
	for id, n := range ca {
		mn += math.Min(n, cb[id])
		mx += math.Max(n, cb[id])
	}
	for id, n := range cb {
		if _, ok := ca[id]; !ok {
			mx += n
		}
	}
	return mn / mx
}

// TestSketchScaleChunkedUnbiased: HMT section 3.3's 22-bit chunks (7 bin +
// 13 tie-breaking + b = 2 stored bits at B = 128; here B = 512, 9 + 13 + 2)
// give an unbiased estimate of the rounded sets' Jaccard J through the
// b-bit correction Ĵ = (4Q − 1)/3. Derived bound: per pair the B bin
// matches are at most binomially variable (one-permutation bins sample
// without replacement), Q = J + (1−J)/4, so Var Ĵ ≤ Q(1−Q)/B·(4/3)²; the
// mean of Ĵ − J over R independent pairs then has SE ≤ sqrt(Σ Var)/R, and a
// bin empty in both sets (probability ≤ e^−8 with ≥ 8 elements per bin)
// biases Ĵ by at most e^−8·4/3 = 4.5e−4. The test fails when |mean| > 4 SE
// + 4.5e−4 (probability 6e−5 under the bound). It also checks, per pair,
// |Ĵ − J| ≤ 5 SE, and that the chunked sketch errs about as the b-bit
// theory says against the 64-bit single-scale one (below).
func TestSketchScaleChunkedUnbiased(t *testing.T) {
	const R, b = 60, 2
	h, err := NewHMT(Options{K: 1024, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	B := float64(h.Bins())
	var sum, varSum, maeChunk, maeFull float64
	for r := range R {
		target := []float64{0.5, 0.7, 0.9}[r%3]
		x, y := pairAt(uint64(2000+r), 40, 1e-3, 1e3, target)
		var wx float64
		for _, f := range x {
			wx += f.Weight
		}
		x, y = scaleWeights(x, 8*B/wx), scaleWeights(y, 8*B/wx) // ≥ 8 elements per bin in the union
		j := roundedJaccard(h, x, y, 0)
		cx, err := h.SketchScaleChunked(nil, x, 0, b)
		if err != nil {
			t.Fatal(err)
		}
		cy, _ := h.SketchScaleChunked(nil, y, 0, b)
		e, err := sketch.BinsJaccard(cx, cy, b, false)
		if err != nil {
			t.Fatal(err)
		}
		q := j + (1-j)/4
		v := q * (1 - q) / B * 16 / 9
		if d := math.Abs(e.J - j); d > 5*math.Sqrt(v) {
			t.Errorf("pair %d: J = %.4f, chunked estimate %.4f, |diff| > 5 SE = %.4f", r, j, e.J, 5*math.Sqrt(v))
		}
		sum += e.J - j
		varSum += v
		maeChunk += math.Abs(e.J - j)
		full, _ := sketch.BinsJaccard(h.SketchScale(nil, x, 0), h.SketchScale(nil, y, 0), 64, false)
		maeFull += math.Abs(full.J - j)
	}
	mean, se := sum/R, math.Sqrt(varSum)/R
	if math.Abs(mean) > 4*se+4.5e-4 {
		t.Errorf("chunked estimator biased: mean Ĵ − J = %.5f, bound 4 SE + 4.5e−4 = %.5f", mean, 4*se+4.5e-4)
	}
	// b = 2 bits carry less than a full value: the error is expected
	// sqrt((4/3)²·Q(1−Q)/(J(1−J))) ≈ 1.17–1.29 times the full one's at
	// J = 0.9 … 0.5; a MAE over 60 pairs varies by about ±15%.
	if maeChunk < 0.8*maeFull || maeChunk > 2*maeFull {
		t.Errorf("MAE chunked %.4f, full %.4f: want 0.8–2×", maeChunk/R, maeFull/R)
	}
	t.Logf("mean Ĵ − J = %.5f (SE %.5f); MAE chunked %.4f, full 64-bit %.4f", mean, se, maeChunk/R, maeFull/R)
}

// TestSketchScaleChunkedConsistent: a set's chunked block is a function of
// the set (feature order does not matter), equal sets agree in every bin,
// and bad B or b are refused.
func TestSketchScaleChunkedConsistent(t *testing.T) {
	h, _ := NewHMT(Options{K: 256, Seed: 3})
	x, _ := pairAt(7, 50, 0.1, 10, 0.8)
	rev := slices.Clone(x)
	slices.Reverse(rev)
	for _, b := range []int{1, 2, 4, 8, 16, 32} {
		p, err := h.SketchScaleChunked(nil, x, 3, b)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := h.SketchScaleChunked(nil, rev, 3, b)
		if !slices.Equal(p, q) || len(p) != h.Bins() {
			t.Fatalf("b=%d: order changes the block (%d values)", b, len(p))
		}
		for _, v := range p {
			if v>>uint(b) != 0 {
				t.Fatalf("b=%d: value %#x wider than b bits", b, v)
			}
		}
	}
	if _, err := h.SketchScaleChunked(nil, x, 0, 3); err == nil {
		t.Error("b = 3 accepted")
	}
	h3, _ := NewHMT(Options{K: 300, Seed: 3}) // 150 bins
	if _, err := h3.SketchScaleChunked(nil, x, 0, 2); err == nil {
		t.Error("150 bins accepted")
	}
}
