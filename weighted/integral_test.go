package weighted

import (
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"gonum.org/v1/gonum/stat/distuv"
)

// chiCrit is the 1 − 1e−4 quantile of χ² with df degrees of freedom: under
// the null hypothesis a fixed-seed test fails with probability 1e−4.
func chiCrit(df int) float64 { return (distuv.ChiSquared{K: float64(df)}).Quantile(1 - 1e-4) }

// TestIntGMatchesEq6 checks G_z(t) against 1 − cdf_z(a) of eq. 6 written
// out, a = e^(−t/z), and that intInvert inverts it.
func TestIntGMatchesEq6(t *testing.T) {
	for _, z := range []float64{2, 3, 10, 1000, 1e6} {
		for _, tt := range []float64{0.05, 0.3, 1, 3, 10} {
			a := math.Exp(-tt / z)
			want := 1 - (z*math.Pow(a, z-1) - (z-1)*math.Pow(a, z))
			got := intG(tt, z)
			// a^z and z·a^(z−1) cancel to ~1e−16·z in want.
			if math.Abs(got-want) > 1e-12*max(1, z/1000) {
				t.Errorf("G_%v(%v) = %v, eq. 6 gives %v", z, tt, got, want)
			}
			if back := intInvert(got, z); math.Abs(back-tt) > 1e-12*tt {
				t.Errorf("intInvert(G_%v(%v)) = %v", z, tt, back)
			}
		}
	}
	// z = 2: cdf_2(a) = 2a − a², so G = (1 − a)².
	if g, w := intG(1, 2), math.Pow(1-math.Exp(-0.5), 2); math.Abs(g-w) > 1e-15 {
		t.Errorf("G_2(1) = %v, want %v", g, w)
	}
}

// TestIntZDistribution checks eq. 5: the least active index z above S is v
// with probability S/(v(v−1)), v > S, so P(z > v) = S/v. N = 100,000
// draws (features x, one sample function each, independent) fall into the
// cells v = S+1…S+14 and "v > S+14"; χ² with 14 df at p = 1e−4.
func TestIntZDistribution(t *testing.T) {
	const n, s = 100000, 5
	c, _ := NewIntCWS(Options{K: 1, Seed: 9})
	obs := make([]int, 15)
	for x := range uint64(n) {
		z := c.z(x, s, 0)
		if z != math.Trunc(z) || z <= s {
			t.Fatalf("z = %v", z)
		}
		obs[min(int(z)-s-1, 14)]++
	}
	var chi float64
	for i, o := range obs {
		v := float64(s + 1 + i)
		p := s / (v * (v - 1))
		if i == 14 {
			p = s / (v - 1) // P(z > S+14)
		}
		e := n * p
		chi += (float64(o) - e) * (float64(o) - e) / e
	}
	t.Logf("z: χ² = %.2f (14 df, critical %.2f)", chi, chiCrit(14))
	if crit := chiCrit(14); chi > crit {
		t.Errorf("z not distributed as eq. 5: χ² = %v > %v; counts %v", chi, crit, obs)
	}
}

// intSet builds a weighted set of counts, IDs 1…len(ws).
func intSet(ws ...float64) []feature.Feature {
	fs := make([]feature.Feature, 0, len(ws))
	for i, w := range ws {
		if w > 0 {
			fs = append(fs, feature.Feature{ID: uint64(i + 1), Weight: w})
		}
	}
	return fs
}

// TestIntUniformPairs checks uniformity over the multiset's (element,
// copy) pairs: weights 1, 2, 3, 4, 7, 13 make 30 pairs; K = 60,000
// independent sample functions put 2,000 expected samples in each pair's
// cell; the fixed seed fails with probability 1e−4 (χ², 29 df) if the
// sampler is uniform. It also checks determinism: a second run, a second
// sampler with the same seed and a permuted input give the same samples.
func TestIntUniformPairs(t *testing.T) {
	const k = 60000
	ws := []float64{1, 2, 3, 4, 7, 13}
	fs := intSet(ws...)
	c, _ := NewIntCWS(Options{K: k, Seed: 3})
	got := c.Samples(nil, fs)
	if len(got) != k {
		t.Fatalf("%d samples", len(got))
	}
	c2, _ := NewIntCWS(Options{K: k, Seed: 3})
	perm := slices.Clone(fs)
	slices.Reverse(perm)
	if !slices.Equal(got, c.Samples(nil, fs)) || !slices.Equal(got, c2.Samples(nil, perm)) {
		t.Fatal("same input, different samples")
	}
	off := []int{0}
	for _, w := range ws {
		off = append(off, off[len(off)-1]+int(w))
	}
	obs := make([]int, off[len(ws)])
	for _, s := range got {
		if s.Copy < 1 || s.Copy > uint64(ws[s.ID-1]) {
			t.Fatalf("sample %+v outside 1…S(x)", s)
		}
		obs[off[s.ID-1]+int(s.Copy)-1]++
	}
	e := float64(k) / float64(len(obs))
	var chi float64
	for _, o := range obs {
		chi += (float64(o) - e) * (float64(o) - e) / e
	}
	t.Logf("pairs: χ² = %.2f (%d df, critical %.2f)", chi, len(obs)-1, chiCrit(len(obs)-1))
	if crit := chiCrit(len(obs) - 1); chi > crit {
		t.Errorf("pairs not uniform: χ² = %v > %v; counts %v", chi, crit, obs)
	}
}

// TestIntLargeCounts runs counts of 2^40 and 3·2^40 (a sampler linear in
// the weight could not) and checks x's frequency, 1/4 for the first,
// within 4 standard errors sqrt(p(1−p)/K) (two-sided p ≈ 6e−5), and that
// Copy/S(x) is uniform (Kolmogorov–Smirnov at p ≈ 1e−4).
func TestIntLargeCounts(t *testing.T) {
	const k = 20000
	ws := []float64{1 << 40, 3 << 40}
	c, _ := NewIntCWS(Options{K: k, Seed: 4})
	n1 := 0
	us := make([]float64, 0, k)
	for _, s := range c.Samples(nil, intSet(ws...)) {
		if s.ID == 1 {
			n1++
		}
		us = append(us, float64(s.Copy)/ws[s.ID-1])
	}
	t.Logf("counts 2^40, 3·2^40: P(x = 1) = %.4f, KS D = %.4f", float64(n1)/k, ksUniform(us))
	if f := float64(n1) / k; math.Abs(f-0.25) > 4*math.Sqrt(0.25*0.75/k) {
		t.Errorf("P(x = 1) = %v, want 0.25", f)
	}
	if d, crit := ksUniform(us), math.Sqrt(math.Log(2/1e-4)/(2*k)); d > crit {
		t.Errorf("Copy/S(x) not uniform: KS D = %v > %v", d, crit)
	}
}

// TestIntConsistency checks MMT's consistency condition: lowering other
// weights (even to 0) and the sampled one's to any count in [y, S(x)]
// never changes the sample.
func TestIntConsistency(t *testing.T) {
	const k = 64
	fs := intSet(5, 17, 1, 300, 2, 9)
	c, _ := NewIntCWS(Options{K: k, Seed: 11})
	for j, s := range c.Samples(nil, fs) {
		for _, frac := range []float64{0, 0.3, 1} {
			low := slices.Clone(fs)
			for i := range low {
				if low[i].ID == s.ID {
					w := low[i].Weight
					low[i].Weight = math.Ceil(float64(s.Copy) + frac*(w-float64(s.Copy)))
				} else {
					low[i].Weight = math.Floor(frac * low[i].Weight)
				}
			}
			if got := c.Samples(nil, low)[j]; got != s {
				t.Fatalf("sample %d: %+v from S, %+v from %v", j, s, got, low)
			}
		}
	}
}

// TestIntCollisionProbability checks Lemma 1 for counts: the K sample
// functions are independent, so the number M of equal samples of A and B
// is Binomial(K, J), J = Σmin/Σmax computed exactly; the test accepts
// |M/K − J| ≤ 4·sqrt(J(1−J)/K) (two-sided p ≈ 6e−5 per pair of sets,
// fixed seed). Sketch values must agree exactly where the samples do.
func TestIntCollisionProbability(t *testing.T) {
	const k = 20000
	c, _ := NewIntCWS(Options{K: k, Seed: 7})
	for _, p := range []struct{ a, b []float64 }{
		{[]float64{3, 1, 4, 1, 5}, []float64{2, 7, 1, 8, 2}},
		{[]float64{10, 0, 6}, []float64{10, 3, 5}},
		{[]float64{1, 1, 1, 1}, []float64{1, 1, 0, 0, 1, 1}},
		{[]float64{1e9, 3e9}, []float64{2e9, 3e9, 1e9}},
	} {
		a, b := intSet(p.a...), intSet(p.b...)
		j := Jaccard(a, b)
		sa, sb := c.Samples(nil, a), c.Samples(nil, b)
		va, vb := c.Sketch(nil, a), c.Sketch(nil, b)
		m := 0
		for i := range sa {
			if sa[i] == sb[i] {
				m++
			}
			if (sa[i] == sb[i]) != (va[i] == vb[i]) {
				t.Fatalf("%v: sample %d: samples %v/%v, values %x/%x", p, i, sa[i], sb[i], va[i], vb[i])
			}
		}
		t.Logf("%v %v: P(equal) = %.4f, Σmin/Σmax = %.4f, 4σ = %.4f", p.a, p.b, float64(m)/k, j, 4*math.Sqrt(j*(1-j)/k))
		if f := float64(m) / k; math.Abs(f-j) > 4*math.Sqrt(j*(1-j)/k) {
			t.Errorf("%v: P(equal) = %v, Σmin/Σmax = %v", p, f, j)
		}
	}
}

// TestIntMatchesContinuousRoundedUp checks the remark of MMT 2.3: the
// continuous sampler's (x, ⌈y⌉) is, for integral S, distributed like the
// integral sampler's (x, copy) — uniform over the pairs — and collides with
// probability Σmin/Σmax too. The two samplers are different random
// functions, so the comparison is of distributions: a two-sample χ²
// homogeneity test over the 30 pairs of TestIntUniformPairs,
// Σ(a−b)²/(a+b) with equal totals K = 60,000, 29 df, p = 1e−4; and the
// collision rate of the rounded continuous samples within 4 standard
// errors of the exact J, as in TestIntCollisionProbability.
func TestIntMatchesContinuousRoundedUp(t *testing.T) {
	const k = 60000
	ws := []float64{1, 2, 3, 4, 7, 13}
	fs := intSet(ws...)
	ic, _ := NewIntCWS(Options{K: k, Seed: 21})
	cc, _ := NewCWS(Options{K: k, Seed: 21})
	off := []int{0}
	for _, w := range ws {
		off = append(off, off[len(off)-1]+int(w))
	}
	oi, oc := make([]int, off[len(ws)]), make([]int, off[len(ws)])
	for _, s := range ic.Samples(nil, fs) {
		oi[off[s.ID-1]+int(s.Copy)-1]++
	}
	for _, s := range cc.Samples(nil, fs) {
		oc[off[s.ID-1]+int(math.Ceil(s.Y))-1]++
	}
	var chi float64
	for i := range oi {
		d := float64(oi[i] - oc[i])
		chi += d * d / float64(oi[i]+oc[i])
	}
	t.Logf("integral vs rounded continuous: χ² = %.2f (%d df, critical %.2f)", chi, len(oi)-1, chiCrit(len(oi)-1))
	if crit := chiCrit(len(oi) - 1); chi > crit {
		t.Errorf("integral and rounded continuous samples differ: χ² = %v > %v\n%v\n%v", chi, crit, oi, oc)
	}
	a, b := intSet(3, 1, 4, 1, 5), intSet(2, 7, 1, 8, 2)
	j := Jaccard(a, b)
	sa, sb := cc.Samples(nil, a), cc.Samples(nil, b)
	m := 0
	for i := range sa {
		if sa[i].ID == sb[i].ID && math.Ceil(sa[i].Y) == math.Ceil(sb[i].Y) {
			m++
		}
	}
	t.Logf("rounded continuous: P(equal) = %.4f, Σmin/Σmax = %.4f, 4σ = %.4f", float64(m)/k, j, 4*math.Sqrt(j*(1-j)/k))
	if f := float64(m) / k; math.Abs(f-j) > 4*math.Sqrt(j*(1-j)/k) {
		t.Errorf("rounded continuous: P(equal) = %v, Σmin/Σmax = %v", f, j)
	}
}

// TestIntEmptyAndOptions: no positive count, no samples; fractional
// weights round up; LogWeights is refused.
func TestIntEmptyAndOptions(t *testing.T) {
	c, _ := NewIntCWS(Options{K: 8})
	if s := c.Samples(nil, []feature.Feature{{ID: 1, Weight: 0}, {ID: 2, Weight: math.NaN()}, {ID: 3, Weight: 1e300}}); len(s) != 0 {
		t.Errorf("absent weights gave %v", s)
	}
	if v := c.Sketch(nil, nil); len(v) != 0 {
		t.Errorf("empty set gave %v", v)
	}
	if !slices.Equal(c.Samples(nil, intSet(2.2, 0.5)), c.Samples(nil, intSet(3, 1))) {
		t.Error("fractional weights not rounded up")
	}
	if _, err := NewIntCWS(Options{LogWeights: true}); err == nil {
		t.Error("LogWeights accepted")
	}
}
