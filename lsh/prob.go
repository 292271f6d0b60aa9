package lsh

import (
	"errors"
	"fmt"
	"math"
)

// binomial returns C(n, k) as a float64 (exact for the sizes used here).
func binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	if k > n-k {
		k = n - k
	}
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}

// BandProb returns the probability that one supershingle of two documents
// of Jaccard similarity j agrees: q^R with q = j + (1−j)/2^SampleBits the
// per-sample agreement (book 2.4; q = j for full samples), plus accidental
// agreement of the KeyBits-wide values, p + (1−p)/2^KeyBits when KeyBits < 64.
func (p Params) BandProb(j float64) float64 {
	j = math.Min(1, math.Max(0, j))
	q := j
	if sb := p.sampleBits(); sb < 64 {
		q = j + (1-j)*math.Ldexp(1, -sb)
	}
	pb := math.Pow(q, float64(p.R))
	if kb := p.keyBits(); kb < 64 {
		pb += (1 - pb) * math.Ldexp(1, -kb)
	}
	return pb
}

// Prob returns the exact probability that two documents of Jaccard
// similarity j become candidates: at least M of B independent supershingles
// agree, P(j) = Σ_{i≥M} C(B,i) p^i (1−p)^{B−i} with p = BandProb(j) (book
// 3.2, 6.1: the AltaVista curve 1 − (1−p^14)^5 (1+5p^14)). Samples from
// different positions of a sketch are assumed independent, as they are for
// k independent min-hashes. Cost: O(B).
func (p Params) Prob(j float64) float64 {
	return binomTail(p.B, p.M, p.BandProb(j))
}

// binomTail returns P(Bin(n, x) >= m), summing positive terms only (no
// cancellation): for x > 1/2 it sums P(Bin(n, 1−x) <= n−m) instead, so the
// first term (1−y)^n >= 2^-n never underflows. Cost: one Pow and O(n).
func binomTail(n, m int, x float64) float64 {
	lo, hi, y := m, n, x
	if x > 0.5 {
		lo, hi, y = 0, n-m, 1-x
	}
	if y <= 0 {
		if lo == 0 {
			return 1
		}
		return 0
	}
	t := math.Pow(1-y, float64(n)) // term i = 0
	ratio := y / (1 - y)
	sum := 0.0
	for i := 0; i <= hi; i++ {
		if i >= lo {
			sum += t
		}
		t *= float64(n-i) / float64(i+1) * ratio
	}
	return math.Min(1, sum)
}

// Areas returns the integrated false-positive and false-negative
// probabilities of p around threshold t: FP = ∫_0^t P(J) dJ and
// FN = ∫_t^1 (1 − P(J)) dJ, by composite Simpson's rule on 256 intervals
// each (error far below 1e-6 for the smooth S-curves here).
func (p Params) Areas(t float64) (fp, fn float64) {
	fp = simpson(p.Prob, 0, t, 256)
	fn = simpson(func(j float64) float64 { return 1 - p.Prob(j) }, t, 1, 256)
	return fp, fn
}

func simpson(f func(float64) float64, a, b float64, n int) float64 {
	if b <= a {
		return 0
	}
	h := (b - a) / float64(n)
	s := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(a+float64(i)*h)
	}
	return s * h / 3
}

// ErrNoChoice is returned by Choose when no scheme fits the constraints.
var ErrNoChoice = errors.New("lsh: no parameters fit the constraints")

// ChooseOptions configure Choose. Only Threshold is required.
type ChooseOptions struct {
	// Threshold is the Jaccard similarity above which pairs should be found,
	// in (0, 1).
	Threshold float64
	// FPWeight and FNWeight weigh the false-positive area (candidates below
	// the threshold, which cost verification) against the false-negative
	// area (pairs above the threshold that are missed). Defaults: 0.5 each,
	// as in datasketch's optimal_param. Only their ratio matters.
	FPWeight, FNWeight float64
	// BudgetBytes bounds Params.Bytes(), the supershingle bytes stored per
	// document. The default 0 means no bound.
	BudgetBytes int
	// MaxSamples bounds k = r·b, the sketch size. The default is 256.
	MaxSamples int
	// MaxBands bounds b. The default is 32.
	MaxBands int
	// MaxKeys bounds C(b, m), the lookup keys (postings) per document. The
	// default is 64.
	MaxKeys int
	// MinM forces m >= MinM (for example 2 to get the AltaVista family).
	// The default 0 means 1.
	MinM int
	// KeyBits and SampleBits are copied into the result and enter P(J);
	// defaults 64 (full width).
	KeyBits, SampleBits int
	// Seed is copied into the result.
	Seed uint64
}

// Choice is the result of Choose.
type Choice struct {
	Params Params
	// FP and FN are the integrated false-positive and false-negative areas
	// (Params.Areas); Loss is FPWeight·FP + FNWeight·FN.
	FP, FN, Loss float64
}

// Choose picks (k, r, b, m) for a similarity threshold by minimizing the
// weighted integrated false-positive and false-negative areas under the
// exact S-curve, over every r, b, m allowed by the options (the method of
// datasketch's optimal_param, extended with m and with b-bit samples and
// narrow keys). Ties go to fewer samples, then fewer keys. Cost: tens of
// milliseconds at the defaults; deterministic.
func Choose(o ChooseOptions) (Choice, error) {
	if !(o.Threshold > 0 && o.Threshold < 1) {
		return Choice{}, fmt.Errorf("%w: threshold %v, want in (0, 1)", ErrParams, o.Threshold)
	}
	if o.FPWeight == 0 && o.FNWeight == 0 {
		o.FPWeight, o.FNWeight = 0.5, 0.5
	}
	if o.FPWeight < 0 || o.FNWeight < 0 || math.IsNaN(o.FPWeight+o.FNWeight) {
		return Choice{}, fmt.Errorf("%w: negative weight", ErrParams)
	}
	if o.MaxSamples <= 0 {
		o.MaxSamples = 256
	}
	if o.MaxBands <= 0 {
		o.MaxBands = 32
	}
	o.MaxBands = min(o.MaxBands, MaxBands, o.MaxSamples)
	if o.MaxKeys <= 0 {
		o.MaxKeys = 64
	}
	o.MaxKeys = min(o.MaxKeys, MaxKeys)
	if o.MinM <= 0 {
		o.MinM = 1
	}
	best := Choice{Loss: math.Inf(1)}
	found := false
	for b := 1; b <= o.MaxBands; b++ {
		for m := o.MinM; m <= b; m++ {
			if binomial(b, m) > float64(o.MaxKeys) {
				continue
			}
			for r := 1; r*b <= o.MaxSamples; r++ {
				p := Params{R: r, B: b, M: m, KeyBits: o.KeyBits, SampleBits: o.SampleBits, Seed: o.Seed}
				if o.BudgetBytes > 0 && p.Bytes() > o.BudgetBytes {
					continue
				}
				fp, fn := p.Areas(o.Threshold)
				loss := o.FPWeight*fp + o.FNWeight*fn
				if !found || better(loss, p, best) {
					best = Choice{Params: p, FP: fp, FN: fn, Loss: loss}
					found = true
				}
			}
		}
	}
	if !found {
		return Choice{}, ErrNoChoice
	}
	return best, nil
}

func better(loss float64, p Params, best Choice) bool {
	const eps = 1e-12
	if loss < best.Loss-eps {
		return true
	}
	if loss > best.Loss+eps {
		return false
	}
	if p.K() != best.Params.K() {
		return p.K() < best.Params.K()
	}
	return p.NumKeys() < best.Params.NumKeys()
}
