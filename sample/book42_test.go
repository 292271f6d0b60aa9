package sample

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/neardup/neardup/sketch"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestBatchCountsBookTable pins the table of book 4.2 ("Uniform sampling
// after AltaVista", the binomial refinement of the batched scheme): with m
// = 128 and bias b = 127/128, a feature starts with a zero in no slot of a
// block with probability 0.366437716, in one with 0.369323052 (the most
// likely outcome), in two and three with 0.184661526 and 0.061069166. The
// numbers come from BatchCounts, the distribution whose cumulative sums are
// the sampler's thresholds (binomialThresholds). The book prints nine
// digits, so they must agree to 5e-10. The book adds that "the cumulative
// probability of any larger result is under 1/2 of a percent"; that holds
// for five or more (0.34%), not for four or more (1.85%, P(K = 4) alone is
// 1.51%), and the test pins both.
func TestBatchCountsBookTable(t *testing.T) {
	pmf := BatchCounts(128, 1.0/128)
	book := []float64{0.366437716, 0.369323052, 0.184661526, 0.061069166}
	rest := 1.0
	for c, want := range book {
		if math.Abs(pmf[c]-want) > 5e-10 {
			t.Errorf("P(K = %d) = %.10f, book %.9f", c, pmf[c], want)
		}
		rest -= pmf[c]
	}
	if math.Abs(rest-0.018509) > 5e-7 {
		t.Errorf("P(K ≥ 4) = %.7f, want 0.018509", rest)
	}
	if r5 := rest - pmf[4]; r5 >= 0.005 || r5 <= 0 {
		t.Errorf("P(K ≥ 5) = %.6f, book: under half a percent", r5)
	}
	sum := 0.0
	for _, p := range pmf {
		sum += p
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("probabilities sum to %v", sum)
	}
	// The sampler's own bias (the book's "more rigorous" e^(−1/m)): a
	// feature is lucky nowhere in a block with probability exactly 1/e.
	for _, m := range []int{64, 128} {
		if p0 := BatchCounts(m, sketch.BatchedLuck(m))[0]; math.Abs(p0-1/math.E) > 1e-14 {
			t.Errorf("m=%d: P(K = 0) = %v, want 1/e", m, p0)
		}
	}
	for _, c := range []struct {
		m    int
		p    float64
		want string
	}{{-1, 0.5, "[]"}, {0, 0.5, "[1]"}, {3, 0, "[1 0 0 0]"}, {3, 1, "[0 0 0 1]"}, {2, 0.5, "[0.25 0.5 0.25]"}} {
		if got := fmt.Sprint(BatchCounts(c.m, c.p)); got != c.want {
			t.Errorf("BatchCounts(%d, %v) = %s, want %s", c.m, c.p, got, c.want)
		}
	}
	t.Logf("book bias 127/128: P(K=0..3) = %.9f %.9f %.9f %.9f, P(K≥4) = %.6f, P(K≥5) = %.6f", pmf[0], pmf[1], pmf[2], pmf[3], rest, rest-pmf[4])
}

// TestBatchedLuckyCountsSampled checks that the sampler draws the number of
// lucky slots per block from BatchCounts. A sketch of a single feature with
// k = m = 128 has bit 63 clear exactly in the slots that feature is lucky
// for (the others are patched up, bit 63 set), so counting them over 20000
// one-feature sketches samples K. The counts in the bins K = 0, 1, 2, 3, ≥ 4
// are compared with 20000·P(bin) by Pearson's chi-square with 4 degrees of
// freedom; a correct sampler exceeds its 0.9999 quantile (23.5) with
// probability 1e-4 (the smallest expected bin, K ≥ 4, holds about 380, so
// the chi-square approximation is sound). The seed is fixed.
func TestBatchedLuckyCountsSampled(t *testing.T) {
	const m, n = 128, 20000
	smp, err := newSampler(sketch.LazyBitsBatched, m, 7, Config{Block: m})
	if err != nil {
		t.Fatal(err)
	}
	pmf := BatchCounts(m, sketch.BatchedLuck(m))
	var obs [5]float64
	fs := ids(0, n)
	var v []uint64
	for i := range fs {
		v = smp.Sketch(v[:0], fs[i:i+1])
		lucky := 0
		for _, x := range v {
			if x>>63 == 0 {
				lucky++
			}
		}
		obs[min(lucky, 4)]++
	}
	exp := [5]float64{pmf[0] * n, pmf[1] * n, pmf[2] * n, pmf[3] * n}
	exp[4] = n - exp[0] - exp[1] - exp[2] - exp[3]
	chi := 0.0
	for i := range obs {
		chi += (obs[i] - exp[i]) * (obs[i] - exp[i]) / exp[i]
	}
	q := (distuv.ChiSquared{K: 4}).Quantile(0.9999)
	t.Logf("K = 0,1,2,3,≥4: observed %v, expected %.0f, chi-square %.2f (limit %.1f)", obs, exp, chi, q)
	if chi > q {
		t.Errorf("chi-square %.2f > %.2f: observed %v, expected %.0f", chi, q, obs, exp)
	}
}

// blockBits returns the expected number of random bits the batched sampler
// reads per feature and block of mb slots, computed exactly from its
// thresholds t (binomialThresholds) — the sum of:
//   - the lazy comparison of a uniform u with the thresholds: it reads more
//     than j bits exactly when u's first j bits are those of some threshold
//     (the thresholds bracketing u then share them), so E = Σ_{j<64} D_j/2^j
//     with D_j the number of distinct j-bit prefixes of the thresholds;
//   - picking K distinct slots with w = ⌈log2 mb⌉ bits a draw, rejecting
//     repeats and values ≥ mb: the (c+1)-th takes 2^w/(mb−c) draws on
//     average;
//   - a run (expected 2 bits) for each of the K lucky slots.
func blockBits(mb int, p float64) float64 {
	t := binomialThresholds(mb, p)
	cmp := 1.0 // j = 0: every comparison reads a bit
	for j := 1; j < 64; j++ {
		d, last := 0, uint64(0)
		for i, x := range t {
			if pre := x >> (64 - j); i == 0 || pre != last {
				d++
				last = pre
			}
		}
		cmp += math.Ldexp(float64(d), -j)
	}
	w := bits.Len(uint(mb - 1))
	pick, e := 0.0, 0.0
	prev := uint64(0)
	for K := 0; K <= mb; K++ {
		// P(K) as the sampler realises it: the width of its threshold bracket.
		var pk float64
		switch {
		case K == 0:
			pk = math.Ldexp(float64(t[0]), -64)
		case K == mb:
			pk = 1 - math.Ldexp(float64(t[mb-1]), -64)
		default:
			pk = math.Ldexp(float64(t[K]-prev), -64)
		}
		if K < mb {
			prev = t[K]
		}
		e += pk * (pick*float64(w) + 2*float64(K))
		if K < mb {
			pick += math.Ldexp(1, w) / float64(mb-K)
		}
	}
	return cmp + e
}

// TestBatchedBlockBits pins the cost claims of book 4.2 for m = 128. The
// book's first batched scheme — compare with (1−1/m)^m, then pick a winner
// with log2 m bits, read its run and compare again, about e times — costs
// 2 + e(log2 m + 2 + 2) = 2 + 11e = 31.9011 bits per block, "smaller than
// 32"; the binomial refinement the sampler implements (draw K from
// BatchCounts, pick the K slots, read K runs) costs "just under 18". The
// exact expectation of the sampler's cost (blockBits, from its thresholds)
// must be below both, and the bits the sampler actually counts must match
// that expectation: over S = 200 sketches of n = 2000 features each, the
// per-feature mean of a sketch has standard deviation σ/sqrt(n), estimated
// by the sample SD across sketches; the grand mean lies within 5 standard
// errors of the expectation (normal tail 6e-7). The bits of the patch-up
// pass are not part of a block's cost: sketches where some slot needed it
// (probability 128·e^(−2000/128) ≈ 2e-5 each; with this seed one of the 200
// does) are skipped, and the tie-breaking bits (b.bits) are subtracted.
func TestBatchedBlockBits(t *testing.T) {
	const m = 128
	w := bits.Len(uint(m - 1))
	book := 2 + math.E*(float64(w)+2+2)
	if got := fmt.Sprintf("%.4f", book); got != "31.9011" {
		t.Fatalf("book's bound 2 + e(log2 m + 4) = %s, want 31.9011", got)
	}
	exact := blockBits(m, sketch.BatchedLuck(m))
	t.Logf("exact expected bits per feature per block of %d: %.4f (book: first scheme %.4f, binomial scheme just under 18)", m, exact, book)
	if exact >= 18 || exact >= book {
		t.Errorf("expected bits per block %.4f, book: under 18 (and under %.4f)", exact, book)
	}
	smp, err := newSampler(sketch.LazyBitsBatched, m, 3, Config{Block: m})
	if err != nil {
		t.Fatal(err)
	}
	b := smp.(*batched)
	const S, n = 200, 2000
	var sum, sum2 float64
	used := 0
	var v []uint64
	for s := range S {
		before := b.cnt.Bits
		v = b.Sketch(v[:0], ids(uint64(s)<<32, uint64(s)<<32+n))
		patched := false
		for _, u := range b.unlucky {
			patched = patched || u
		}
		if patched {
			continue
		}
		x := float64(b.cnt.Bits-before-b.buf.bits) / n
		sum += x
		sum2 += x * x
		used++
	}
	if used < S-2 {
		t.Fatalf("%d of %d sketches patched", S-used, S)
	}
	mean := sum / float64(used)
	se := math.Sqrt((sum2/float64(used) - mean*mean) / float64(used-1))
	t.Logf("measured %.4f ± %.4f bits per feature per block over %d sketches", mean, se, used)
	if math.Abs(mean-exact) > 5*se {
		t.Errorf("measured %.4f bits per feature per block, exact expectation %.4f (5 SE = %.4f)", mean, exact, 5*se)
	}
}
