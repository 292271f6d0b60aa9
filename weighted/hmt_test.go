package weighted

import (
	"errors"
	"math"
	"math/bits"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
	"gonum.org/v1/gonum/stat/distuv"
)

// ophBlock is the one-permutation sketch of an element set, computed the
// slow, obvious way.
func ophBlock(h *HMT, es []Element, i int) []uint64 {
	blk := make([]uint64, h.kb)
	for j := range blk {
		blk[j] = Empty
	}
	for _, e := range es {
		g := elemHash(h.ophSeed(i), e.ID, e.Copy)
		b, _ := bits.Mul64(g, uint64(h.kb))
		blk[b] = min(blk[b], g)
	}
	return blk
}

// TestHMTSketchIsReductionPlusOPH: the fused sketch loop equals
// ReduceToUnwtd(Dep) of the scaled weights followed by one-permutation
// hashing, scale by scale, for both roundings, plain and log weights.
func TestHMTSketchIsReductionPlusOPH(t *testing.T) {
	s := rng.New(3)
	fs := logUniform(&s, 60, 1e-3, 1e3)
	for _, indep := range []bool{false, true} {
		for _, lg := range []bool{false, true} {
			h, _ := NewHMT(Options{K: 64, Seed: 4, Independent: indep, LogWeights: lg})
			in := fs
			if lg {
				in = logWeights(fs, 0)
			}
			v := h.Sketch(nil, in)
			sc, log2W := h.Scale(in)
			if len(v) != h.Len() || int(int64(v[0])) != sc || math.Float64frombits(v[1]) != log2W {
				t.Fatalf("indep=%v log=%v: bad layout", indep, lg)
			}
			if w := math.Exp2(log2W) * math.Pow(2, float64(sc)); w < h.target || w >= 2*h.target*(1+1e-12) {
				t.Errorf("first scale %d puts |w|₁ at %v, want [%v, %v)", sc, w, h.target, 2*h.target)
			}
			for r := range h.t {
				es := h.Reduce(nil, in, sc+r)
				if !slices.Equal(ophBlock(h, es, sc+r), v[2+r*h.kb:2+(r+1)*h.kb]) {
					t.Errorf("indep=%v log=%v: block %d differs from OPH of Reduce", indep, lg, r)
				}
				if lg {
					continue
				}
				scaled := scaleWeights(fs, math.Pow(2, float64(sc+r)))
				var ref []Element
				if indep {
					ref = ReduceToUnwtd(nil, scaled, h.scaleSeed(sc+r))
				} else {
					ref = ReduceToUnwtdDep(nil, scaled, h.rDep)
				}
				if !slices.Equal(ref, es) {
					t.Errorf("indep=%v: Reduce at scale %d differs from ReduceToUnwtd", indep, sc+r)
				}
			}
		}
	}
}

// jaccElems returns jacc(S1, S2) of two reductions: elements are prefixes
// (a, 1…n_a), so the intersection holds min(n1, n2) copies of a.
func jaccElems(e1, e2 []Element) float64 {
	n1, n2 := map[uint64]uint64{}, map[uint64]uint64{}
	for _, e := range e1 {
		n1[e.ID] = max(n1[e.ID], e.Copy)
	}
	for _, e := range e2 {
		n2[e.ID] = max(n2[e.ID], e.Copy)
	}
	var num, den uint64
	for a, x := range n1 {
		num += min(x, n2[a])
		den += max(x, n2[a])
	}
	for a, y := range n2 {
		if _, ok := n1[a]; !ok {
			den += y
		}
	}
	if den == 0 {
		return 1
	}
	return float64(num) / float64(den)
}

// TestTheorem31 checks HMT Theorems 3.1 and 3.2 for ReduceToUnwtd and
// ReduceToUnwtdDep over R = 20,000 seeds:
//
//  1. E|S_i| = |w_i|₁: the mean size is within 4 SE of |w_i|₁;
//  2. P(||S_i| − |w_i|₁| ≥ 3·sqrt(|w_i|₁ ln(2/δ))) ≤ δ;
//  3. |E jacc(S₁,S₂) − jacc(w₁,w₂)| ≤ 1/(W−1): the mean is within
//     1/(W−1) + 4 SE of J (W = max |w_i|₁ ≈ 25, so the bound is ≈ 0.04 and
//     a rounding that is not consistent, or floors, breaks it);
//  4. P(|jacc(S₁,S₂) − J| ≥ sqrt(27 ln(4/δ)/W)) ≤ δ, at W ≈ 2,500.
//
// Empirical frequencies p̂ of the tail events must be ≤ δ + 4·sqrt(δ/R).
func TestTheorem31(t *testing.T) {
	const R = 20000
	for _, dep := range []bool{false, true} {
		reduce := ReduceToUnwtd
		if dep {
			reduce = ReduceToUnwtdDep
		}
		for _, W := range []float64{25, 2500} {
			a, b := pairAt(7, 20, 0.3, 3, 0.6)
			var wa, wb float64
			for _, f := range a {
				wa += f.Weight
			}
			for _, f := range b {
				wb += f.Weight
			}
			a, b = scaleWeights(a, W/max(wa, wb)), scaleWeights(b, W/max(wa, wb))
			wa, wb = wa*W/max(wa, wb), wb*W/max(wa, wb)
			j := Jaccard(a, b)
			var sum, sum2, size, size2 float64
			tailSize, tailJ := map[float64]int{}, map[float64]int{}
			deltas := []float64{0.5, 0.1, 0.01}
			var e1, e2 []Element
			for r := range R {
				e1 = reduce(e1[:0], a, uint64(r))
				e2 = reduce(e2[:0], b, uint64(r))
				x := jaccElems(e1, e2)
				sum += x
				sum2 += x * x
				n := float64(len(e1))
				size += n
				size2 += n * n
				for _, d := range deltas {
					if math.Abs(n-wa) >= 3*math.Sqrt(wa*math.Log(2/d)) {
						tailSize[d]++
					}
					if math.Abs(x-j) >= math.Sqrt(27*math.Log(4/d)/W) {
						tailJ[d]++
					}
				}
			}
			mean, sd := sum/R, math.Sqrt((sum2/R-(sum/R)*(sum/R))/R)
			if d := math.Abs(mean - j); d > 1/(W-1)+4*sd {
				t.Errorf("dep=%v W=%v: bias %.5f > 1/(W−1) + 4 SE = %.5f", dep, W, d, 1/(W-1)+4*sd)
			}
			ms, ss := size/R, math.Sqrt((size2/R-(size/R)*(size/R))/R)
			if math.Abs(ms-wa) > 4*ss+1e-9 {
				t.Errorf("dep=%v W=%v: mean size %.3f, want |w|₁ = %.3f ± %.3f", dep, W, ms, wa, 4*ss)
			}
			for _, d := range deltas {
				lim := d + 4*math.Sqrt(d/R)
				if p := float64(tailSize[d]) / R; p > lim {
					t.Errorf("dep=%v W=%v δ=%v: size tail %.4f > %.4f", dep, W, d, p, lim)
				}
				if p := float64(tailJ[d]) / R; p > lim {
					t.Errorf("dep=%v W=%v δ=%v: Jaccard tail %.4f > %.4f", dep, W, d, p, lim)
				}
			}
			t.Logf("dep=%v W=%v: J=%.4f, E jacc(S1,S2)=%.4f (bias %.5f, bound %.5f), SD %.4f", dep, W, j, mean, mean-j, 1/(W-1), sd*math.Sqrt(R))
		}
	}
}

// binomialMAE returns E|Bin(k, J)/k − J|, the error of k independent
// exact samples.
func binomialMAE(k int, j float64) float64 {
	b := distuv.Binomial{N: float64(k), P: j}
	var m float64
	for i := 0; i <= k; i++ {
		m += b.Prob(float64(i)) * math.Abs(float64(i)/float64(k)-j)
	}
	return m
}

// TestHMTAccuracy: over R = 150 sample functions (seeds) per pair at
// k = 256, HMT's estimate has bias within 1/(W'−1) + 4 SE (W' ≥ L·k/(t−τ)
// = 512 is the smallest scaled weight, Theorem 3.1 part 3; OPH is unbiased
// given the rounded sets up to its ratio form) and, at J ≥ 0.8, mean
// absolute error within 0.005 + 4 SE(MAE) of the binomial ideal
// E|Bin(k,J)/k − J| — the accuracy goal. Weights span six orders of
// magnitude and are also tested scaled by 2^±64.
func TestHMTAccuracy(t *testing.T) {
	const R, k = 150, 256
	for ti, target := range []float64{0.5, 0.8, 0.9, 0.95} {
		a, b := pairAt(uint64(300+ti), 100, 1e-3, 1e3, target)
		j := Jaccard(a, b)
		ideal := binomialMAE(k, j)
		for _, sc := range []float64{1, 0x1p64, 0x1p-64} {
			as, bs := scaleWeights(a, sc), scaleWeights(b, sc)
			var sum, sum2, abs, abs2 float64
			var va, vb []uint64
			for r := range R {
				h, _ := NewHMT(Options{K: k, Seed: uint64(r)})
				va, vb = h.Sketch(va[:0], as), h.Sketch(vb[:0], bs)
				res, err := h.Estimate(va, vb)
				if err != nil || res.Below {
					t.Fatalf("J=%.3f: %+v, %v", j, res, err)
				}
				d := res.J - j
				sum += d
				sum2 += d * d
				abs += math.Abs(d)
				abs2 += d * d
			}
			bias := sum / R
			sd := math.Sqrt(sum2/R - bias*bias)
			mae := abs / R
			seMAE := math.Sqrt((abs2/R - mae*mae) / R)
			if math.Abs(bias) > 1.0/511+4*sd/math.Sqrt(R) {
				t.Errorf("J=%.3f ×%g: bias %.4f", j, sc, bias)
			}
			if j >= 0.8 && mae > ideal+0.005+4*seMAE {
				t.Errorf("J=%.3f ×%g: MAE %.4f > binomial ideal %.4f + 0.005 + 4 SE (%.4f)", j, sc, mae, ideal, seMAE)
			}
			if sc == 1 {
				t.Logf("J=%.3f: bias %+.4f, SD %.4f, MAE %.4f (binomial ideal %.4f)", j, bias, sd, mae, ideal)
			}
		}
	}
}

// TestHMTBelowAlpha: "below α" is returned only when the true similarity is
// below α or the total weights differ by more than 1/α (which implies it:
// J ≤ min/max), and always in the latter case.
func TestHMTBelowAlpha(t *testing.T) {
	h, _ := NewHMT(Options{K: 128, Seed: 1})
	s := rng.New(8)
	for trial := range 300 {
		a := logUniform(&s, 30, 0.1, 10)
		c := math.Exp2(-5 * s.Float64()) // weight ratio 1/32 … 1
		b := make([]feature.Feature, 0, len(a))
		for _, f := range a {
			if s.Float64() < 0.9 {
				b = append(b, feature.Feature{ID: f.ID, Weight: f.Weight * c * math.Exp(0.2*(s.Float64()-0.5))})
			}
		}
		j := Jaccard(a, b)
		var wa, wb float64
		for _, f := range a {
			wa += f.Weight
		}
		for _, f := range b {
			wb += f.Weight
		}
		ratio := min(wa, wb) / max(wa, wb)
		res, err := h.Estimate(h.Sketch(nil, a), h.Sketch(nil, b))
		if err != nil {
			t.Fatal(err)
		}
		if res.Below && j >= 0.5 {
			t.Fatalf("trial %d: below α reported at J = %v (ratio %v)", trial, j, ratio)
		}
		if ratio < 0.5 && !res.Below {
			t.Fatalf("trial %d: ratio %v < α but an estimate %v was reported", trial, ratio, res.J)
		}
		if !res.Below && res.Scales < h.t-h.tau {
			t.Fatalf("trial %d: only %d common scales at ratio %v", trial, res.Scales, ratio)
		}
	}
	// No common scale at all: weights 2^10 apart.
	a := []feature.Feature{{ID: 1, Weight: 1}}
	res, _ := h.Estimate(h.Sketch(nil, a), h.Sketch(nil, scaleWeights(a, 1024)))
	if !res.Below || res.Scales != 0 {
		t.Errorf("disjoint scales: %+v", res)
	}
}

func TestEstimateJaccardSketch(t *testing.T) {
	s := rng.New(4)
	a, b := pairAt(9, 50, 0.01, 100, 0.9)
	_ = s
	for _, indep := range []bool{false, true} {
		h, _ := NewHMT(Options{K: 256, Seed: 2, Independent: indep})
		ska := &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, a)}
		skb := &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, b)}
		if err := ska.Validate(); err != nil {
			t.Fatal(err)
		}
		enc, err := ska.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var dec sketch.Sketch
		if err := dec.UnmarshalBinary(enc); err != nil {
			t.Fatal(err)
		}
		r1, err1 := EstimateJaccard(ska, skb)
		r2, err2 := EstimateJaccard(&dec, skb)
		want, _ := h.Estimate(ska.Values, skb.Values)
		if err1 != nil || err2 != nil || r1 != want || r2 != want {
			t.Errorf("indep=%v: %+v %v, after decoding %+v %v, want %+v", indep, r1, err1, r2, err2, want)
		}
		if math.Abs(r1.J-Jaccard(a, b)) > 4*r1.StdErr+0.01 {
			t.Errorf("estimate %v ± %v, exact %v", r1.J, r1.StdErr, Jaccard(a, b))
		}
	}
	h1, _ := NewHMT(Options{K: 256})
	h2, _ := NewHMT(Options{K: 256, Alpha: 0.25, Tau: 2})
	_, err := EstimateJaccard(&sketch.Sketch{Header: h1.Header(), Values: h1.Sketch(nil, a)},
		&sketch.Sketch{Header: h2.Header(), Values: h2.Sketch(nil, a)})
	if !errors.Is(err, sketch.ErrMismatch) {
		t.Errorf("different parameters: err = %v", err)
	}
	c, _ := NewCWS(Options{K: 512})
	r, err := EstimateJaccard(&sketch.Sketch{Header: c.Header(), Values: c.Sketch(nil, a)},
		&sketch.Sketch{Header: c.Header(), Values: c.Sketch(nil, b)})
	if err != nil || math.Abs(r.J-Jaccard(a, b)) > 4*math.Sqrt(0.1*0.9/512) {
		t.Errorf("cws via EstimateJaccard: %+v, %v", r, err)
	}
	if _, err := h1.Estimate(make([]uint64, 5), h1.Sketch(nil, a)); !errors.Is(err, ErrSketchLength) {
		t.Errorf("short sketch: err = %v", err)
	}
}
