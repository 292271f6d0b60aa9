package sample

import (
	"math"
	"testing"

	"github.com/neardup/neardup/sketch"
)

// betaMoment returns E[Y^r] for Y the minimum of z independent uniforms on
// (0, 1) (Beta(1, z)): r!·z!/(z+r)! = Π_{i=1..r} i/(z+i).
func betaMoment(z, r int) float64 {
	m := 1.0
	for i := 1; i <= r; i++ {
		m *= float64(i) / float64(z+i)
	}
	return m
}

// TestFlajoletMartinLemma checks, directly on sketches, the lemma of the
// lecture notes on distinct elements (Hashing and Sketching, "Flajolet–Martin
// algorithm") on which sketch.Cardinality and the ± of `neardup count` rest:
// for a set of z distinct features, a slot's minimum Y_j (the sampler's
// value mapped by sketch.Uniform) has E[Y_j] = 1/(z+1) and Var[Y_j] =
// 2/((z+1)(z+2)) − 1/(z+1)² ≤ 1/(z+1)², and the k slots are independent, so
// the mean Ȳ of k slots has k(z+1)²·Var[Ȳ] = z/(z+2) ≤ 1 (hence the
// relative standard error 1/sqrt(k) that count prints).
//
// First moments: over N = 20·1024 slot minima (20 sketches of k = 1024 on
// disjoint sets, each with its own seed), the mean of Y lies within 5
// standard errors sqrt(Var[Y]/N) of 1/(z+1), and the mean of Y² within 5
// standard errors sqrt((E[Y⁴] − E[Y²]²)/N) of E[Y²] = 2/((z+1)(z+2)), the
// exact moments of Beta(1, z) (normal tails 6e-7 each).
//
// The lemma for Ȳ: over T = 1000 sketches of k = 64 slots, the sample
// variance s² of Ȳ has relative standard error sqrt(2/(T−1) + κ/(kT)), κ ≤
// 6 the excess kurtosis of one Y_j (6 for the exponential limit), so
// k(z+1)²·s² lies within 5 of those of z/(z+2). A sampler whose slots were
// correlated would inflate it (correlation ρ adds (k−1)ρ·z/(z+2)).
func TestFlajoletMartinLemma(t *testing.T) {
	algs := []sketch.Algorithm{sketch.MinHash, sketch.Prefix, sketch.LazyBits, sketch.LazyBitsBatched}
	zs := []int{1, 10, 1000}
	if testing.Short() {
		algs, zs = algs[:1], []int{10}
	}
	for _, alg := range algs {
		for _, z := range zs {
			// First and second moments of one slot's minimum.
			const k1, S1 = 1024, 20
			var s1, s2 float64
			for s := range S1 {
				smp, err := newSampler(alg, k1, uint64(1000+s), Config{})
				if err != nil {
					t.Fatal(err)
				}
				base := uint64(s+1) << 40
				sk := Make(smp, ids(base, base+uint64(z)))
				for _, x := range sk.Values {
					y := sketch.Uniform(sk.Header, x)
					s1 += y
					s2 += y * y
				}
			}
			n := float64(k1 * S1)
			m1, m2, m4 := betaMoment(z, 1), betaMoment(z, 2), betaMoment(z, 4)
			if math.Abs(m1-1/float64(z+1)) > 1e-15 {
				t.Fatalf("E[min] = %v, want 1/(z+1)", m1)
			}
			if v := m2 - m1*m1; v > m1*m1 {
				t.Fatalf("z=%d: Var[Y] = %v above 1/(z+1)^2", z, v)
			}
			se1, se2 := math.Sqrt((m2-m1*m1)/n), math.Sqrt((m4-m2*m2)/n)
			if d := s1/n - m1; math.Abs(d) > 5*se1 {
				t.Errorf("%v z=%d: mean of slot minima %.6g, 1/(z+1) = %.6g (5 SE = %.2g)", alg, z, s1/n, m1, 5*se1)
			}
			if d := s2/n - m2; math.Abs(d) > 5*se2 {
				t.Errorf("%v z=%d: mean of squared minima %.6g, 2/((z+1)(z+2)) = %.6g (5 SE = %.2g)", alg, z, s2/n, m2, 5*se2)
			}
			// The variance of the mean of k slots.
			const k, T = 64, 1000
			var a1, a2 float64
			for s := range T {
				smp, err := newSampler(alg, k, uint64(5000+s), Config{Block: 64})
				if err != nil {
					t.Fatal(err)
				}
				base := uint64(s+1)<<40 | 1<<39
				sk := Make(smp, ids(base, base+uint64(z)))
				var ybar float64
				for _, x := range sk.Values {
					ybar += sketch.Uniform(sk.Header, x)
				}
				ybar /= k
				a1 += ybar
				a2 += ybar * ybar
			}
			s2bar := (a2 - a1*a1/T) / (T - 1)
			got := float64(k) * float64((z+1)*(z+1)) * s2bar
			want := float64(z) / float64(z+2)
			rel := math.Sqrt(2.0/(T-1) + 6.0/(k*T))
			t.Logf("%v z=%d: mean min %.5g (1/(z+1) = %.5g), k(z+1)²·Var[Ȳ] = %.4f (z/(z+2) = %.4f ± %.1f%%)",
				alg, z, s1/n, m1, got, want, 100*rel)
			if math.Abs(got/want-1) > 5*rel {
				t.Errorf("%v z=%d: k(z+1)²·Var[Ȳ] = %.4f, want %.4f within %.0f%%", alg, z, got, want, 500*rel)
			}
		}
	}
}
