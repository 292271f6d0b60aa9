package sample

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
	"gonum.org/v1/gonum/stat/distuv"
)

// spec describes how each sampler is tested.
type spec struct {
	alg   sketch.Algorithm
	cfg   Config // further parameters (Block, Modulus)
	k     int    // slots for the collision/variance tests
	indep bool   // slots are independent MinHash functions
	// variance returns the sampler's known estimator variance for a union of
	// n features at similarity j with k slots; NaN when not stated.
	variance func(j float64, n, k int) float64
}

func mhVar(j float64, n, k int) float64 { return j * (1 - j) / float64(k) }

// hyperVar is the variance of a without-replacement (hypergeometric) sample
// of k of the n union features: J(1−J)/k·(n−k)/(n−1).
func hyperVar(j float64, n, k int) float64 {
	if k >= n {
		return 0
	}
	return j * (1 - j) / float64(k) * float64(n-k) / float64(n-1)
}

// propVar is the variance of the proportional estimator: given u kept union
// features (u ~ Bin(n, 1/m)) it is hypergeometric, J(1−J)/u·(n−u)/(n−1);
// with u ≈ n/m that is J(1−J)(m−1)/(n−1)·E[n/(mu)] ≈ J(1−J)(m−1)/(n−1)·(1+m/n).
func propVar(m int) func(j float64, n, k int) float64 {
	return func(j float64, n, _ int) float64 {
		fm, fn := float64(m), float64(n)
		return j * (1 - j) * (fm - 1) / (fn - 1) * (1 + fm/fn)
	}
}

var specs = []spec{
	{alg: sketch.MinHash, k: 64, indep: true, variance: mhVar},
	{alg: sketch.Prefix, k: 64, indep: true, variance: mhVar},
	{alg: sketch.LazyBits, k: 64, indep: true, variance: mhVar},
	{alg: sketch.LazyBitsBatched, cfg: Config{Block: 64}, k: 128, indep: true, variance: mhVar},
	{alg: sketch.BottomK, k: 16, variance: hyperVar},
	{alg: sketch.Proportional, cfg: Config{Modulus: 16}, variance: propVar(16)},
	// OPH without empty bins samples k bins of the union without
	// replacement: ≈ hypergeometric. With empty bins (small sets)
	// densification copies bins and the variance rises; see TestOPHVariance.
	{alg: sketch.OPH, k: 16, variance: hyperVar},
	// SuperMinHash: Ertl 2017 shows Var = J(1−J)/k·α(k, n) with α ≤ 1 and
	// α → 1 as n/k → ∞; we test the bound α ∈ [0.5, 1.2] below.
	{alg: sketch.SuperMinHash, k: 16},
}

func ids(lo, hi uint64) []feature.Feature {
	fs := make([]feature.Feature, 0, hi-lo)
	for i := lo; i < hi; i++ {
		fs = append(fs, feature.Feature{ID: rng.Hash(99, i), Weight: 1})
	}
	return fs
}

// pair returns two sets whose union has u features of which i are shared:
// J = i/u exactly.
func pair(u, i int) (a, b []feature.Feature, j float64) {
	onlyA := (u - i) / 2
	all := ids(0, uint64(u))
	a = all[:onlyA+i]
	b = all[onlyA:]
	return a, b, float64(i) / float64(u)
}

// estimates draws s seeds and returns the per-seed Jaccard estimates.
func estimates(t *testing.T, sp spec, a, b []feature.Feature, seeds int, seed0 uint64) []float64 {
	t.Helper()
	out := make([]float64, 0, seeds)
	var va, vb []uint64
	for s := range seeds {
		smp, err := newSampler(sp.alg, sp.k, seed0+uint64(s), sp.cfg)
		if err != nil {
			t.Fatal(err)
		}
		va = smp.Sketch(va[:0], a)
		vb = smp.Sketch(vb[:0], b)
		sa := sketch.Sketch{Header: smp.Header(), Values: va}
		sb := sketch.Sketch{Header: smp.Header(), Values: vb}
		if len(va) == 0 && len(vb) == 0 {
			// Proportional kept nothing of the union: no estimate. Given
			// u > 0 kept union features the estimate is hypergeometric
			// with mean J exactly, so conditioning on u > 0 is unbiased.
			continue
		}
		e, err := sketch.Jaccard(&sa, &sb)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.J)
	}
	return out
}

func meanVar(x []float64) (m, v float64) {
	for _, y := range x {
		m += y
	}
	m /= float64(len(x))
	for _, y := range x {
		v += (y - m) * (y - m)
	}
	return m, v / float64(len(x)-1)
}

// TestCollisionRate: the mean estimate over independent sample functions
// equals the exact Jaccard within 4 standard errors, at J ≈ 0.1, 0.5, 0.8,
// 0.95 for small (40-feature union) and large (10,000-feature union) sets.
// Independent-slot samplers use seeds × k ≥ 10,000 independent slots, so
// the SE is sqrt(J(1−J)/(seeds·k)). The others (dependent slots) use 10,000
// seeds and the SE of the mean of 10,000 i.i.d. per-seed estimates,
// sqrt(s²/seeds), from their sample variance s² (CLT). A 4-SE bound fails
// by chance with probability 6e-5 per check.
func TestCollisionRate(t *testing.T) {
	for _, sp := range specs {
		t.Run(sp.alg.String(), func(t *testing.T) {
			for _, u := range []int{40, 10000} {
				for _, target := range []float64{0.1, 0.5, 0.8, 0.95} {
					a, b, j := pair(u, int(math.Round(target*float64(u))))
					seeds := 10000
					if sp.indep {
						seeds = (10000 + sp.k - 1) / sp.k
					}
					if u == 10000 && !sp.indep && sp.alg == sketch.SuperMinHash {
						seeds = 2500 // still 2500·16 = 40,000 slots; SE from the seeds
					}
					if u == 10000 && sp.alg == sketch.Proportional {
						seeds = 2000
					}
					est := estimates(t, sp, a, b, seeds, 1000)
					m, v := meanVar(est)
					se := math.Sqrt(v / float64(len(est)))
					if sp.indep {
						se = math.Sqrt(j * (1 - j) / float64(seeds*sp.k))
					}
					if math.Abs(m-j) > 4*se {
						t.Errorf("u=%d J=%.4f: mean estimate %.5f, |diff| %.5f > 4 SE (%.5f)", u, j, m, math.Abs(m-j), 4*se)
					}
				}
			}
		})
	}
}

// TestVariance: the variance of the per-seed estimate is within 20% of the
// sampler's known variance (spec.variance), over 2,000 seeds: the sample
// variance of 2,000 near-normal estimates has relative SE sqrt(2/1999) ≈
// 3.2%, so 20% is over 6 SE.
func TestVariance(t *testing.T) {
	const seeds = 2000
	for _, sp := range specs {
		t.Run(sp.alg.String(), func(t *testing.T) {
			for _, u := range []int{40, 1000} {
				for _, target := range []float64{0.5, 0.8} {
					if sp.alg == sketch.Proportional && u == 40 {
						continue // ~2.5 kept features: the estimator is too discrete for a variance law
					}
					if sp.alg == sketch.OPH && u == 40 {
						continue // empty bins: TestOPHVariance
					}
					a, b, j := pair(u, int(math.Round(target*float64(u))))
					_, v := meanVar(estimates(t, sp, a, b, seeds, 77))
					if sp.variance == nil { // SuperMinHash: α = v/(J(1−J)/k) ∈ [0.5, 1.2]
						alpha := v / mhVar(j, u, sp.k)
						t.Logf("u=%d J=%.3f: α = %.3f", u, j, alpha)
						if alpha < 0.5 || alpha > 1.2 {
							t.Errorf("u=%d J=%.3f: variance ratio α = %.3f outside [0.5, 1.2]", u, j, alpha)
						}
						continue
					}
					want := sp.variance(j, u, sp.k)
					t.Logf("u=%d J=%.3f: var %.3g, theory %.3g, ratio %.3f (minhash %.3g)", u, j, v, want, v/want, mhVar(j, u, sp.k))
					if math.Abs(v/want-1) > 0.2 {
						t.Errorf("u=%d J=%.3f: variance %.4g not within 20%% of %.4g", u, j, v, want)
					}
				}
			}
		})
	}
}

// TestOPHVariance measures OPH's variance against MinHash's at the same k
// for a small union (40 features, k = 16 and 64 bins, many empty) where
// densification repeats bins. Optimal densification keeps it close to
// MinHash (Shrivastava 2017); we require ratio ≤ 1.5 and log the figures.
func TestOPHVariance(t *testing.T) {
	for _, k := range []int{16, 64} {
		sp := spec{alg: sketch.OPH, k: k}
		a, b, j := pair(40, 20)
		_, v := meanVar(estimates(t, sp, a, b, 4000, 5))
		r := v / mhVar(j, 40, k)
		t.Logf("OPH k=%d, 40-feature union, J=0.5: variance %.4g = %.3f × minhash", k, v, r)
		if r > 1.5 {
			t.Errorf("k=%d: OPH variance %.3f × minhash", k, r)
		}
	}
}

// TestConsistency: removing a feature never changes a slot unless that slot
// sampled it (its value equals the removed feature's singleton value); set
// sketches lose at most that feature's hash. Also: order and duplicates
// never matter.
func TestConsistency(t *testing.T) {
	for _, sp := range specs {
		t.Run(sp.alg.String(), func(t *testing.T) {
			for _, n := range []int{30, 600} {
				base := ids(0, uint64(n))
				for s := uint64(0); s < 40; s++ {
					smp, _ := newSampler(sp.alg, 64, s, sp.cfg)
					old := smp.Sketch(nil, base)
					// shuffled, with duplicates
					shuf := slices.Clone(base)
					st := rng.New(s)
					for i := len(shuf) - 1; i > 0; i-- {
						j := st.Intn(uint64(i + 1))
						shuf[i], shuf[j] = shuf[j], shuf[i]
					}
					shuf = append(shuf, base[:n/3]...)
					if got := smp.Sketch(nil, shuf); !slices.Equal(got, old) {
						t.Fatalf("n=%d seed=%d: shuffled input with duplicates changed the sketch", n, s)
					}
					for r := 0; r < 5; r++ {
						x := int(st.Intn(uint64(n)))
						less := slices.Concat(base[:x], base[x+1:])
						nw := smp.Sketch(nil, less)
						single := smp.Sketch(nil, base[x:x+1])
						if sp.alg.IsSet() {
							hx := single
							for _, v := range old {
								if !slices.Contains(nw, v) && !slices.Contains(hx, v) {
									t.Fatalf("n=%d seed=%d: removing a feature dropped another sample", n, s)
								}
							}
							if len(hx) > 0 && !slices.Contains(old, hx[0]) && !slices.Equal(old, nw) {
								t.Fatalf("n=%d seed=%d: removing an unsampled feature changed the sketch", n, s)
							}
							continue
						}
						for i := range old {
							if old[i] != nw[i] && old[i] != single[i] {
								t.Fatalf("n=%d seed=%d slot %d: changed though the removed feature was not its sample", n, s, i)
							}
						}
					}
				}
			}
		})
	}
}

// TestUniformity: over many seeds, each of n = 20 features is sampled with
// frequency 1/n. The chi-square statistic (n−1 = 19 degrees of freedom)
// must stay below its 0.9999 quantile. Independent-slot samplers count
// every slot; dependent ones only slot 0 of each of 20,000 seeds (densified
// OPH slots included: with 64 bins and 20 features most are borrowed). Set
// samplers count inclusions: each feature is in the sample independently
// (Proportional, p = 1/m) or in exactly k of n draws without replacement
// (BottomK), and Σ (c−Sp)²/(Sp(1−p)) is χ² with n (resp. n−1) df.
func TestUniformity(t *testing.T) {
	const n = 20
	fs := ids(5000, 5000+n)
	for _, sp := range specs {
		t.Run(sp.alg.String(), func(t *testing.T) {
			counts := make([]float64, n)
			seeds, k := 20000, 64
			if sp.indep {
				seeds = 500
			}
			if sp.alg == sketch.OPH {
				// 16 bins for 20 features: bin 0 is empty (slot 0
				// densified) (15/16)^20 = 27% of the time. Singleton
				// sketches densify 15 bins at ~16 probes each.
				k = 16
			}
			var total float64
			for s := range seeds {
				smp, _ := newSampler(sp.alg, k, uint64(s)+1e6, sp.cfg)
				v := smp.Sketch(nil, fs)
				var singles [n][]uint64
				for f := range fs {
					singles[f] = smp.Sketch(nil, fs[f:f+1])
				}
				if sp.alg.IsSet() {
					for f := range fs {
						if len(singles[f]) > 0 && slices.Contains(v, singles[f][0]) {
							counts[f]++
						}
					}
					continue
				}
				slots := 1
				if sp.indep {
					slots = k
				}
				for i := range slots {
					for f := range fs {
						if singles[f][i] == v[i] {
							counts[f]++
							total++
						}
					}
				}
			}
			var chi float64
			df := float64(n - 1)
			switch sp.alg {
			case sketch.BottomK, sketch.Proportional:
				p := 16.0 / n // k = 64 > n: every feature always in
				if sp.alg == sketch.Proportional {
					p, df = 1.0/16, n
				} else {
					p = 1
				}
				if p == 1 {
					for f, c := range counts {
						if c != float64(seeds) {
							t.Fatalf("feature %d sampled %v of %d times, want always", f, c, seeds)
						}
					}
					return
				}
				e := float64(seeds) * p
				for _, c := range counts {
					chi += (c - e) * (c - e) / (e * (1 - p))
				}
			default:
				e := total / n
				for _, c := range counts {
					chi += (c - e) * (c - e) / e
				}
			}
			q := distuv.ChiSquared{K: df}.Quantile(0.9999)
			if chi > q {
				t.Errorf("chi-square %.1f > %.1f (df %v, p = 1e-4); counts %v", chi, q, df, counts)
			}
		})
	}
}

// TestBottomKSmallUniformity covers bottom-k when k < n: 5 of 20 features.
func TestBottomKSmallUniformity(t *testing.T) {
	const n, k, seeds = 20, 5, 20000
	fs := ids(7000, 7000+n)
	counts := make([]float64, n)
	for s := range seeds {
		smp, _ := newSampler(sketch.BottomK, k, uint64(s)+3e6, Config{})
		v := smp.Sketch(nil, fs)
		for f := range fs {
			if slices.Contains(v, smp.Sketch(nil, fs[f:f+1])[0]) {
				counts[f]++
			}
		}
	}
	p := float64(k) / n
	e := seeds * p
	var chi float64
	for _, c := range counts {
		chi += (c - e) * (c - e) / (e * (1 - p))
	}
	// Σ over a without-replacement sample: χ² with n−1 df after the
	// constraint Σc = seeds·k (each term's variance is Sp(1−p)·n/(n−1)·...
	// ≤ Sp(1−p)), so the 0.9999 quantile of χ²(n−1) is conservative.
	if q := (distuv.ChiSquared{K: n - 1}).Quantile(0.9999); chi > q {
		t.Errorf("chi-square %.1f > %.1f", chi, q)
	}
}

// TestBitsPerSample checks the random-bit counters against the book: lazy
// runs cost 2 bits per input per sample in expectation (4.1), AltaVista
// prefixes 8 + 64/256 (3.2), and the batched scheme well under 1 (4.2).
func TestBitsPerSample(t *testing.T) {
	fs := ids(0, 1000)
	for _, c := range []struct {
		alg    sketch.Algorithm
		cfg    Config
		lo, hi float64
	}{
		{sketch.LazyBits, Config{}, 1.95, 2.1},
		{sketch.Prefix, Config{}, 8.0, 8.6},
		{sketch.LazyBitsBatched, Config{Block: 128}, 0.05, 0.25},
		{sketch.LazyBitsBatched, Config{Block: 64}, 0.05, 0.35},
	} {
		smp, _ := newSampler(c.alg, 128, 1, c.cfg)
		for s := 0; s < 20; s++ {
			smp.Sketch(nil, fs[s*10:s*10+800])
		}
		got := smp.(BitCounter).Counter().PerInputPerSample()
		t.Logf("%v %v: %.4f bits per input per sample", c.alg, smp.Header().Params, got)
		if got < c.lo || got > c.hi {
			t.Errorf("%v: %.4f bits per input per sample, want in [%v, %v]", c.alg, got, c.lo, c.hi)
		}
	}
}

// TestFlajoletMartin: with k ≥ 4/(ε²δ) minima, Ẑ = 1/mean(min) − 1 is within
// (1±ε)z with probability at least 1 − δ (lecture notes, Chebyshev). ε =
// 0.2, δ = 0.1 gives k = 1000; over 200 trials the failure fraction must not
// exceed δ (Chebyshev is loose; the true rate is far lower).
func TestFlajoletMartin(t *testing.T) {
	const eps, delta = 0.2, 0.1
	k := int(math.Ceil(4 / (eps * eps * delta)))
	for _, alg := range []sketch.Algorithm{sketch.MinHash, sketch.Prefix, sketch.LazyBits} {
		fails := 0
		const trials = 200
		for tr := 0; tr < trials; tr++ {
			z := 200 + 37*tr
			fs := ids(uint64(tr)<<32, uint64(tr)<<32+uint64(z))
			smp, _ := newSampler(alg, k, uint64(tr), Config{})
			c, err := sketch.Cardinality(Make(smp, fs))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(c-float64(z)) > eps*float64(z) {
				fails++
			}
		}
		t.Logf("%v: %d/%d outside ±%v", alg, fails, trials, eps)
		if float64(fails)/trials > delta {
			t.Errorf("%v: %d/%d estimates outside ±%v", alg, fails, trials, eps)
		}
	}
}

// TestCardinalityOthers: the bottom-k, OPH, SuperMinHash, batched and
// proportional size estimates are within 4 relative SE of the truth on
// average (bottom-k: SE ≈ 1/sqrt(k−2) per estimate).
func TestCardinalityOthers(t *testing.T) {
	for _, alg := range []sketch.Algorithm{sketch.BottomK, sketch.OPH, sketch.SuperMinHash, sketch.LazyBitsBatched, sketch.Proportional} {
		const z, trials, k = 5000, 100, 256
		var sum, sum2 float64
		for tr := 0; tr < trials; tr++ {
			smp, _ := newSampler(alg, k, uint64(tr), Config{})
			c, err := sketch.Cardinality(Make(smp, ids(uint64(tr)<<32, uint64(tr)<<32+z)))
			if err != nil {
				t.Fatal(err)
			}
			sum += c / z
			sum2 += (c / z) * (c / z)
		}
		m := sum / trials
		sd := math.Sqrt(sum2/trials - m*m)
		t.Logf("%v: mean ratio %.4f, sd %.4f", alg, m, sd)
		if math.Abs(m-1) > 4*sd/math.Sqrt(trials)+0.01 {
			t.Errorf("%v: mean estimate/true = %.4f (sd %.4f)", alg, m, sd)
		}
	}
}

// TestNewErrors: every bad field is an error wrapping ErrParam, and
// Validate names all of them at once.
func TestNewErrors(t *testing.T) {
	for _, c := range []Config{
		{Algorithm: sketch.MinHash, K: -1}, {Algorithm: sketch.MinHash, K: MaxK + 1}, {Algorithm: sketch.CWS, K: 1<<20 + 1},
		{Algorithm: sketch.LazyBitsBatched, Block: 32}, {Algorithm: sketch.Proportional, Modulus: 1<<62 + 1},
		{Algorithm: sketch.Prefix, BufLen: -1}, {Algorithm: sketch.Algorithm(99)},
		{Algorithm: sketch.HMT, HMT: sketch.HMTParams{Alpha: 2}}, {Features: feature.Options{K: -1}},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) succeeded", c)
		}
	}
	err := Config{Algorithm: sketch.LazyBitsBatched, K: -1, Block: 3, BufLen: 2000}.Validate()
	if !errors.Is(err, ErrParam) || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("Validate: %v, want three problems wrapping ErrParam", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
	_ = fmt.Sprint()
}

// newSampler returns the sampler for alg with k slots and seed, and the
// further parameters of c.
func newSampler(alg sketch.Algorithm, k int, seed uint64, c Config) (Sampler, error) {
	c.Algorithm, c.K, c.Seed = alg, k, seed
	return New(c)
}
