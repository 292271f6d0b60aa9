package weighted

import (
	"fmt"
	"math"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestWordMatchesRNG(t *testing.T) {
	for _, key := range []uint64{0, 1, 42, 1 << 63} {
		s := rng.New(key)
		for j := range 5 {
			if got, want := word(key, j), s.Uint64(); got != want {
				t.Fatalf("word(%d, %d) = %#x, rng stream gives %#x", key, j, got, want)
			}
		}
		// Sketch hoists rng.Hash(r, a) as Mix64(a ^ Mix64(r+golden)).
		if got, want := rng.Mix64(7^rng.Mix64(key+golden)), rng.Hash(key, 7); got != want {
			t.Fatalf("hoisted Hash = %#x, rng.Hash = %#x", got, want)
		}
		if got, want := unit(key), rng.ToFloat(key); got != want {
			t.Fatalf("unit = %v, ToFloat = %v", got, want)
		}
	}
}

func TestInvertC(t *testing.T) {
	for _, u := range []float64{5.6e-17, 1e-12, 1e-6, 0.001, 0.01, 0.2, 0.29999, 0.3, 0.5, 0.9, 0.999, 1 - 1e-9, 1 - 0x1p-54} {
		s := invertC(u)
		// Compare in the complement where u is near 1.
		if u < 0.5 {
			if got := cdfC(s); math.Abs(got-u) > 1e-13*u {
				t.Errorf("C(invertC(%g)) = %g", u, got)
			}
		} else if got := (1 + s) * math.Exp(-s); math.Abs(got-(1-u)) > 1e-12*(1-u) {
			t.Errorf("1−C(invertC(%g)) = %g, want %g", u, got, 1-u)
		}
	}
	// The series branch of cdfC agrees with the closed form where they meet.
	if a, b := cdfC(0.0999), 1-(1.0999)*math.Exp(-0.0999); math.Abs(a-b) > 1e-15 {
		t.Errorf("cdfC series %v vs closed form %v at 0.1", a, b)
	}
}

func TestSplit(t *testing.T) {
	for _, w := range []float64{1, 0.5, 0.75, 3, 1e-300, 1e300, 5e-324, math.MaxFloat64} {
		e, m, ok := split(w, false)
		if !ok || !(m > 0.5 && m <= 1) || math.Ldexp(m, e) != w {
			t.Errorf("split(%g) = %v·2^%d, %v", w, m, e, ok)
		}
		el, ml, ok := split(lnPos(w), true)
		if !ok || el != e || math.Abs(ml-m) > 1e-12 {
			t.Errorf("split(ln %g) = %v·2^%d, want %v·2^%d", w, ml, el, m, e)
		}
	}
	for _, w := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, _, ok := split(w, false); ok {
			t.Errorf("split(%v) accepted", w)
		}
	}
	if _, _, ok := split(math.Inf(-1), true); ok {
		t.Error("split(−Inf, log) accepted")
	}
}

// TestCollisionProbability is the proof of MMT Lemma 1 and Ioffe's theorem:
// P(sample(S) = sample(T)) = Σmin/Σmax. Each of K = 10,000 sample functions
// gives an independent Bernoulli(J), so the match count is Binomial(K, J)
// and |Q − J| ≤ 4·sqrt(J(1−J)/K) fails with probability 6e−5 per check.
// Weights span six orders of magnitude (1e−3 … 1e3); the same pairs are
// also tested scaled to 1e−300 and 1e300 and as logarithms shifted by ±5000
// (weights e^±5000, outside float64), where J is unchanged.
func TestCollisionProbability(t *testing.T) {
	const k = 10000
	cws, _ := NewCWS(Options{K: k, Seed: 11})
	icws, _ := NewICWS(Options{K: k, Seed: 11})
	cwsLog, _ := NewCWS(Options{K: k, Seed: 11, LogWeights: true})
	icwsLog, _ := NewICWS(Options{K: k, Seed: 11, LogWeights: true})
	var dst1, dst2 []uint64
	for ti, target := range []float64{0.2, 0.5, 0.8, 0.95} {
		a, b := pairAt(uint64(100+ti), 40, 1e-3, 1e3, target)
		j := Jaccard(a, b)
		if math.Abs(j-target) > 0.005 {
			t.Fatalf("pairAt(%v) made J = %v", target, j)
		}
		bound := 4 * math.Sqrt(j*(1-j)/k)
		type variant struct {
			name string
			s    valuer
			a, b []feature.Feature
		}
		vs := []variant{
			{"cws", cws, a, b}, {"icws", icws, a, b},
			{"cws×1e-300", cws, scaleWeights(a, 1e-300), scaleWeights(b, 1e-300)},
			{"cws×1e300", cws, scaleWeights(a, 1e300), scaleWeights(b, 1e300)},
			{"icws×1e-300", icws, scaleWeights(a, 1e-300), scaleWeights(b, 1e-300)},
			{"cws log+5000", cwsLog, logWeights(a, 5000), logWeights(b, 5000)},
			{"cws log−5000", cwsLog, logWeights(a, -5000), logWeights(b, -5000)},
			{"icws log+5000", icwsLog, logWeights(a, 5000), logWeights(b, 5000)},
		}
		for _, v := range vs {
			dst1 = v.s.Sketch(dst1[:0], v.a)
			dst2 = v.s.Sketch(dst2[:0], v.b)
			q := float64(matches(dst1, dst2)) / k
			if math.Abs(q-j) > bound {
				t.Errorf("%s J=%.4f: collision rate %.4f, |diff| > 4 SE = %.4f", v.name, j, q, bound)
			}
		}
	}
}

// TestReplicatedReference checks the integer replication reference the
// same way, on small integer weights (it costs O(K·Σw)).
func TestReplicatedReference(t *testing.T) {
	const k = 10000
	r, _ := NewReplicated(Options{K: k, Seed: 3})
	a := []feature.Feature{{ID: 1, Weight: 5}, {ID: 2, Weight: 3}, {ID: 3, Weight: 1}, {ID: 4, Weight: 7}}
	b := []feature.Feature{{ID: 1, Weight: 2}, {ID: 2, Weight: 4}, {ID: 3, Weight: 1}, {ID: 5, Weight: 3}}
	j := Jaccard(a, b) // (2+3+1)/(5+4+1+7+3) = 6/20
	q := float64(matches(r.Sketch(nil, a), r.Sketch(nil, b))) / k
	if math.Abs(q-j) > 4*math.Sqrt(j*(1-j)/k) {
		t.Errorf("replication: collision rate %v, J = %v", q, j)
	}
	// Uniformity of the copy number: y uniform on {1..S(x)}.
	var cnt [8]int
	n := 0
	for _, s := range r.Samples(nil, a) {
		if s.ID == 4 {
			cnt[int(s.Y)]++
			n++
		}
	}
	chi := 0.0
	for i := 1; i <= 7; i++ {
		e := float64(n) / 7
		chi += (float64(cnt[i]) - e) * (float64(cnt[i]) - e) / e
	}
	if crit := (distuv.ChiSquared{K: 6}).Quantile(1 - 1e-4); chi > crit {
		t.Errorf("replication copy numbers: chi-square %v > %v", chi, crit)
	}
}

// TestUniformity proves the two halves of MMT's uniformity: x is chosen
// with probability S(x)/ΣS (chi-square over K = 100,000 sample functions,
// cells with expectation below 5 pooled, rejected at p = 1e−4) and y/S(x)
// is uniform on (0, 1] (Kolmogorov–Smirnov, rejected when
// D > sqrt(ln(2/1e−4)/(2K)), p ≈ 1e−4).
func TestUniformity(t *testing.T) {
	const k = 100000
	ws := []float64{1e-3, 0.01, 0.2, 1, 3, 10, 30, 100, 300, 1000}
	fs := make([]feature.Feature, len(ws))
	var total float64
	for i, w := range ws {
		fs[i] = feature.Feature{ID: uint64(1000 + i), Weight: w}
		total += w
	}
	cws, _ := NewCWS(Options{K: k, Seed: 5})
	icws, _ := NewICWS(Options{K: k, Seed: 5})
	for _, s := range []struct {
		name string
		s    sampler
	}{{"cws", cws}, {"icws", icws}} {
		samples := s.s.Samples(nil, fs)
		if len(samples) != k {
			t.Fatalf("%s: %d samples", s.name, len(samples))
		}
		counts := map[uint64]int{}
		us := make([]float64, 0, k)
		for _, sm := range samples {
			counts[sm.ID]++
			w := ws[sm.ID-1000]
			u := sm.Y / w
			if !(u > 0 && u <= 1) {
				t.Fatalf("%s: y = %v outside (0, S(x) = %v]", s.name, sm.Y, w)
			}
			us = append(us, u)
		}
		var chi, pe float64
		po, cells := 0, 0
		for i, w := range ws {
			e := k * w / total
			o := counts[uint64(1000+i)]
			if e < 5 {
				pe += e
				po += o
				continue
			}
			chi += (float64(o) - e) * (float64(o) - e) / e
			cells++
		}
		if pe > 0 {
			chi += (float64(po) - pe) * (float64(po) - pe) / pe
			cells++
		}
		if crit := (distuv.ChiSquared{K: float64(cells - 1)}).Quantile(1 - 1e-4); chi > crit {
			t.Errorf("%s: x not proportional to S(x): chi-square %v > %v (df %d)", s.name, chi, crit, cells-1)
		}
		if d, crit := ksUniform(us), math.Sqrt(math.Log(2/1e-4)/(2*k)); d > crit {
			t.Errorf("%s: y/S(x) not uniform: KS D = %v > %v", s.name, d, crit)
		}
	}
}

// TestConsistency proves MMT's consistency condition directly: lowering
// any weight other than the sampled feature's (even to zero), and the
// sampled one's to anywhere in [y, S(x)], never changes the sample. ICWS
// lowers the sampled weight to y·(1+1e−9) rather than y: at exactly y,
// ⌊ln y/r + β⌋ sits on an integer and floating-point rounding may fall
// either way.
func TestConsistency(t *testing.T) {
	const k = 64
	cws, _ := NewCWS(Options{K: k, Seed: 9})
	icws, _ := NewICWS(Options{K: k, Seed: 9})
	s := rng.New(77)
	for _, sm := range []struct {
		name  string
		s     sampler
		exact bool
	}{{"cws", cws, true}, {"icws", icws, false}} {
		for trial := range 150 {
			fs := logUniform(&s, 30, 1e-3, 1e3)
			base := sm.s.Samples(nil, fs)
			j := int(s.Intn(k))
			x := base[j]
			low := make([]feature.Feature, 0, len(fs))
			for _, f := range fs {
				if f.ID == x.ID {
					lo := x.Y
					if !sm.exact {
						lo *= 1 + 1e-9
					}
					w := lo + (f.Weight-lo)*s.Float64()
					if trial%5 == 0 {
						w = lo // the boundary itself
					}
					low = append(low, feature.Feature{ID: f.ID, Weight: w})
					continue
				}
				switch r := s.Float64(); {
				case r < 0.2: // removed
				case r < 0.4:
					low = append(low, f)
				default:
					low = append(low, feature.Feature{ID: f.ID, Weight: f.Weight * s.Open01()})
				}
			}
			got := sm.s.Samples(nil, low)[j]
			if got.ID != x.ID || got.Y != x.Y {
				t.Fatalf("%s trial %d: sample %d changed from %+v to %+v after lowering weights", sm.name, trial, j, x, got)
			}
		}
	}
}

// TestEnhancementsIdentical: the section-3 speed-ups change the work, never
// the samples, including at extreme weights and as logarithms.
func TestEnhancementsIdentical(t *testing.T) {
	s := rng.New(5)
	sets := [][]feature.Feature{logUniform(&s, 200, 1e-300, 1e300), logUniform(&s, 50, 0.5, 2), logUniform(&s, 3, 1, 1)}
	for lg := range 2 {
		var want []uint64
		for dis := Enhancement(0); dis < 8; dis++ {
			c, _ := NewCWS(Options{K: 64, Seed: 1, Disable: dis, LogWeights: lg == 1})
			var got []uint64
			for _, fs := range sets {
				if lg == 1 {
					fs = logWeights(fs, 0)
				}
				got = c.Sketch(got, fs)
			}
			if dis == 0 {
				want = got
			} else if m := matches(got, want); m != len(want) {
				t.Errorf("Disable=%03b log=%d: %d of %d values differ", dis, lg, len(want)-m, len(want))
			}
		}
	}
}

// TestInversionsGrowLikeLogN reproduces MMT Figure 1: with equal weights the
// i-th feature improves the best hash with probability 1/i, so a sample
// function inverts cdf_z H_n = Σ1/i ≈ ln n + 0.577 times, with variance
// Σ(1/i − 1/i²); over K independent sample functions the mean is within
// 4·sqrt(var/K) of H_n. Eq. 7 makes inversions equal best-hash changes (up
// to the 1e−9 safety margin), and 3.4 leaves few exact z evaluations.
func TestInversionsGrowLikeLogN(t *testing.T) {
	const k = 256
	c, _ := NewCWS(Options{K: k, Seed: 2})
	var prev float64
	for _, n := range []int{10, 100, 1000, 10000} {
		fs := make([]feature.Feature, n)
		var h, v float64
		for i := range fs {
			fs[i] = feature.Feature{ID: uint64(i)*0x9e3779b97f4a7c15 + 1, Weight: 1}
			h += 1 / float64(i+1)
			v += 1/float64(i+1) - 1/float64((i+1)*(i+1))
		}
		cnt := c.Count(fs)
		inv := float64(cnt.Inversions) / k
		if math.Abs(inv-h) > 4*math.Sqrt(v/k) {
			t.Errorf("n=%d: %.3f inversions per sample, want H_n = %.3f ± %.3f", n, inv, h, 4*math.Sqrt(v/k))
		}
		if cnt.Inversions != cnt.BestChanges {
			t.Errorf("n=%d: %d inversions but %d best changes", n, cnt.Inversions, cnt.BestChanges)
		}
		if n > 10 && !(inv-prev > 1.5 && inv-prev < 3.1) { // ln 10 = 2.30
			t.Errorf("n=%d: inversions grew by %.2f per decade, want ≈ ln 10", n, inv-prev)
		}
		prev = inv
		t.Logf("n=%5d: inversions/sample %.2f (H_n %.2f), exact z %.2f, pairs %d", n, inv, h, float64(cnt.ZExact)/k, cnt.Pairs/k)
	}
}

func TestEmptyAndAbsent(t *testing.T) {
	c, _ := NewCWS(Options{K: 8})
	ic, _ := NewICWS(Options{K: 8})
	h, _ := NewHMT(Options{K: 8})
	absent := []feature.Feature{{ID: 1, Weight: 0}, {ID: 2, Weight: -1}, {ID: 3, Weight: math.NaN()}, {ID: 4, Weight: math.Inf(1)}}
	for _, s := range []valuer{c, ic, h} {
		if v := s.Sketch(nil, nil); len(v) != 0 {
			t.Errorf("%T: empty set gives %d values", s, len(v))
		}
		if v := s.Sketch(nil, absent); len(v) != 0 {
			t.Errorf("%T: absent weights give %d values", s, len(v))
		}
		one := append(absent[:len(absent):len(absent)], feature.Feature{ID: 9, Weight: 2})
		if v, w := s.Sketch(nil, one), s.Sketch(nil, one[4:]); matches(v, w) != len(w) || len(v) != len(w) {
			t.Errorf("%T: absent weights changed the sketch", s)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{K: -1}, {K: 1 << 21}} {
		if _, err := NewCWS(o); err == nil {
			t.Errorf("NewCWS(%+v) accepted", o)
		}
	}
	for _, o := range []Options{{Alpha: 1.5}, {Scales: 1}, {Tau: 3, Scales: 3}, {L: 0.5}, {L: 5000}} {
		if _, err := NewHMT(o); err == nil {
			t.Errorf("NewHMT(%+v) accepted", o)
		}
	}
	err := Options{K: -1, Alpha: 2, Scales: 1, Tau: 1, L: 4}.validate(true)
	if err == nil || len(fmt.Sprint(err)) < 60 {
		t.Errorf("validate should report every problem: %v", err)
	}
}
