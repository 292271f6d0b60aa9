package weighted

import (
	"math"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// exactReductionJaccard returns E[jacc(S1, S2)] and E|S1|, E|S2| exactly for
// the reductions of HMT Algorithms 3.1 (dep false) and 3.2 (dep true) of
// two weighted sets on the same features (weights of w2 may be 0), by
// convolving the per-feature distributions of (|S1 ∩ S2|, |S1 ∪ S2|)
// contributions: feature a adds min(n1, n2) and max(n1, n2) with
// n_i = ⌊w_i⌋ + [u_i < frac(w_i)]. Under ReduceToUnwtdDep u1 = u2 = h(r, a);
// under ReduceToUnwtd u_i = h(r, a, ⌊w_i⌋), shared only when the floors
// agree and independent otherwise.
func exactReductionJaccard(w1, w2 []float64, dep bool) (ej, es1, es2 float64) {
	dist := map[[2]int]float64{{0, 0}: 1}
	for a := range w1 {
		f1, f2 := math.Floor(w1[a]), math.Floor(w2[a])
		r1, r2 := w1[a]-f1, w2[a]-f2
		type out struct {
			n1, n2 int
			p      float64
		}
		var outs []out
		if dep || f1 == f2 { // one uniform u: +1 where u < r_i
			lo, hi := math.Min(r1, r2), math.Max(r1, r2)
			both := out{int(f1) + 1, int(f2) + 1, lo}
			one := out{int(f1), int(f2), hi - lo}
			if r1 > r2 {
				one.n1++
			} else {
				one.n2++
			}
			outs = []out{both, one, {int(f1), int(f2), 1 - hi}}
		} else {
			for _, b1 := range []int{0, 1} {
				for _, b2 := range []int{0, 1} {
					p := (1 - r1) * (1 - r2)
					switch {
					case b1 == 1 && b2 == 1:
						p = r1 * r2
					case b1 == 1:
						p = r1 * (1 - r2)
					case b2 == 1:
						p = (1 - r1) * r2
					}
					outs = append(outs, out{int(f1) + b1, int(f2) + b2, p})
				}
			}
		}
		next := map[[2]int]float64{}
		for k, p := range dist {
			for _, o := range outs {
				if o.p == 0 {
					continue
				}
				next[[2]int{k[0] + min(o.n1, o.n2), k[1] + max(o.n1, o.n2)}] += p * o.p
			}
		}
		dist = next
		es1 += f1 + r1
		es2 += f2 + r2
	}
	for k, p := range dist {
		if k[1] > 0 {
			ej += p * float64(k[0]) / float64(k[1])
		}
	}
	return ej, es1, es2
}

// TestTheorems31And32Exact computes E[jacc(S1, S2)] of both reductions
// exactly (no sampling) for random small weighted sets and checks HMT
// Theorems 3.1 and 3.2 part 3: |E[jacc(S1,S2)] − jacc(w1,w2)| ≤ 1/(W − 1),
// W = max(|w1|₁, |w2|₁) (section 4.2: both lie in
// [(w_min − 1)/(w_max − 1), w_min/(w_max − 1)], Theorem 4.2, and for the
// dependent rounding Theorem 4.3), and part 1, E|S_i| = |w_i|₁ — which the
// convolution gives by construction, so the check is of the bookkeeping.
// Every case also runs the library's ReduceToUnwtd(Dep) over 4,000 seeds
// and requires the mean jacc within 4 SD/√4000 of the exact expectation
// (jacc ∈ [0, 1], so SD ≤ 1/2).
func TestTheorems31And32Exact(t *testing.T) {
	s := rng.New(97)
	worst := 0.0
	for trial := range 40 {
		n := 3 + trial%5
		w1, w2 := make([]float64, n), make([]float64, n)
		fs1, fs2 := make([]feature.Feature, n), make([]feature.Feature, n)
		for a := range n {
			w1[a] = 0.2 + 3*s.Float64()
			w2[a] = w1[a] * (0.5 + s.Float64())
			if a == 0 {
				w2[a] = 0 // a feature of w1 only
			}
			fs1[a] = feature.Feature{ID: uint64(a + 1), Weight: w1[a]}
			fs2[a] = feature.Feature{ID: uint64(a + 1), Weight: w2[a]}
		}
		j := Jaccard(fs1, fs2)
		var t1, t2 float64
		for a := range n {
			t1 += w1[a]
			t2 += w2[a]
		}
		W := math.Max(t1, t2)
		for _, dep := range []bool{false, true} {
			ej, e1, e2 := exactReductionJaccard(w1, w2, dep)
			if math.Abs(e1-t1) > 1e-9 || math.Abs(e2-t2) > 1e-9 {
				t.Fatalf("trial %d: E|S| = %v, %v, want %v, %v", trial, e1, e2, t1, t2)
			}
			if d := math.Abs(ej - j); d > 1/(W-1) {
				t.Errorf("trial %d dep=%v: |E jacc − J| = %.5f > 1/(W−1) = %.5f", trial, dep, d, 1/(W-1))
			} else {
				worst = math.Max(worst, d*(W-1))
			}
			if trial%8 == 0 {
				const R = 4000
				var sum float64
				for r := range R {
					var e1s, e2s []Element
					if dep {
						e1s, e2s = ReduceToUnwtdDep(nil, fs1, uint64(r)), ReduceToUnwtdDep(nil, fs2, uint64(r))
					} else {
						e1s, e2s = ReduceToUnwtd(nil, fs1, uint64(r)), ReduceToUnwtd(nil, fs2, uint64(r))
					}
					sum += jaccElems(e1s, e2s)
				}
				if m := sum / R; math.Abs(m-ej) > 4*0.5/math.Sqrt(R) {
					t.Errorf("trial %d dep=%v: library mean jacc %.4f, exact %.4f", trial, dep, m, ej)
				}
			}
		}
	}
	t.Logf("largest |E jacc − J|·(W−1) = %.3f (the theorems allow 1)", worst)
}
