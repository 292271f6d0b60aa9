package weighted

import (
	"fmt"
	"math"

	"github.com/neardup/neardup/sketch"
)

// Version is the sampler version written into sketch headers; it changes
// whenever any sampler's output for the same input changes.
const Version = 1

// Header returns the header of CWS sketches: Algorithm sketch.CWS, K
// samples, full 64-bit values, Params 0.
func (c *CWS) Header() sketch.Header {
	return sketch.Header{Algorithm: sketch.CWS, Version: Version, Seed: c.seed, K: uint32(c.k), Bits: 64, Features: c.features}
}

// Header returns the header of ICWS sketches: Algorithm sketch.ICWS, K
// samples, full 64-bit values, Params 0.
func (c *ICWS) Header() sketch.Header {
	return sketch.Header{Algorithm: sketch.ICWS, Version: Version, Seed: c.seed, K: uint32(c.k), Bits: 64, Features: c.features}
}

// Header returns the header of HMT sketches: Algorithm sketch.HMTDep
// (sketch.HMT with Options.Independent), K = Len() values, and Params
// packing the parameters two sketches must share:
//
//	bits 0–23   α·2^24
//	bits 24–29  τ
//	bits 30–35  t (Scales)
//	bits 36–51  L·16
func (h *HMT) Header() sketch.Header {
	alg := sketch.HMTDep
	if h.indep {
		alg = sketch.HMT
	}
	p := uint64(math.Round(h.alpha*alphaQ)) | uint64(h.tau)<<24 | uint64(h.t)<<30 | uint64(math.Round(h.l*lQ))<<36
	return sketch.Header{Algorithm: alg, Version: Version, Seed: h.seed, K: uint32(h.Len()), Bits: 64, Features: h.features, Params: p}
}

// Result is a weighted Jaccard estimate. When Below is true the similarity
// is known to be below Alpha (HMT: the total weights differ by more than a
// factor 1/α, or the sketches share no scale) and J is only the best
// available guess (0 when no scale is shared). Otherwise J estimates the
// weighted Jaccard similarity and StdErr its standard error (binomial over
// the compared samples). Scales is the number of scales averaged (HMT) or 1.
type Result struct {
	J, StdErr float64
	Below     bool
	Alpha     float64
	Scales    int
}

// EstimateJaccard estimates the weighted Jaccard similarity Σmin/Σmax of
// the weighted sets behind two sketches of this package. For CWS and ICWS
// sketches it is the fraction of equal samples (sketch.Jaccard). For HMT
// sketches it is Algorithm 3.4: the average over the scales both sketches
// hold of the one-permutation estimate matches/(B − bins empty in both),
// or Below when the weight ratio rules out similarity ≥ α or no scale is
// shared. Headers must be equal (error wrapping sketch.ErrMismatch); b-bit
// compression is not supported for HMT. Cost O(len(Values)), no allocation.
func EstimateJaccard(a, b *sketch.Sketch) (Result, error) {
	if err := a.Header.Check(b.Header); err != nil {
		return Result{}, err
	}
	h := a.Header
	switch h.Algorithm {
	case sketch.CWS, sketch.ICWS:
		e, err := sketch.Jaccard(a, b)
		if err != nil {
			return Result{}, err
		}
		return Result{J: e.J, StdErr: e.StdErr, Scales: 1}, nil
	case sketch.HMT, sketch.HMTDep:
	default:
		return Result{}, fmt.Errorf("%w: %v is not a weighted algorithm", ErrMismatch, h.Algorithm)
	}
	if h.Bits != 64 {
		return Result{}, fmt.Errorf("%w: b-bit HMT sketches", sketch.ErrUnsupported)
	}
	alpha := float64(h.Params&(alphaQ-1)) / alphaQ
	t := int(h.Params >> 30 & 63)
	if t < 2 || int(h.K) < 2+t || (int(h.K)-2)%t != 0 || alpha <= 0 {
		return Result{}, fmt.Errorf("%w: HMT header %v", ErrMismatch, h)
	}
	return estimateHMT(a.Values, b.Values, t, (int(h.K)-2)/t, alpha)
}

// Estimate is EstimateJaccard for two value slices made by h.Sketch.
func (h *HMT) Estimate(a, b []uint64) (Result, error) {
	return estimateHMT(a, b, h.t, h.kb, h.alpha)
}

func estimateHMT(a, b []uint64, t, kb int, alpha float64) (Result, error) {
	n := 2 + t*kb
	if (len(a) != 0 && len(a) != n) || (len(b) != 0 && len(b) != n) {
		return Result{}, fmt.Errorf("%w: %d and %d values, want %d", ErrSketchLength, len(a), len(b), n)
	}
	if len(a) == 0 || len(b) == 0 {
		if len(a) == len(b) {
			return Result{J: 1, Alpha: alpha}, nil
		}
		return Result{Below: true, Alpha: alpha}, nil
	}
	sa, sb := int(int64(a[0])), int(int64(b[0]))
	la, lb := math.Float64frombits(a[1]), math.Float64frombits(b[1])
	res := Result{Alpha: alpha}
	// J ≤ min(|w₁|,|w₂|)/max(|w₁|,|w₂|): a weight ratio below α rules it out.
	if math.Exp2(-math.Abs(la-lb)) < alpha {
		res.Below = true
	}
	lo, hi := max(sa, sb), min(sa, sb)+t-1
	var sum, vsum float64
	for i := lo; i <= hi; i++ {
		ba := a[2+(i-sa)*kb : 2+(i-sa+1)*kb]
		bb := b[2+(i-sb)*kb : 2+(i-sb+1)*kb]
		eq, both := 0, 0
		for j, v := range ba {
			w := bb[j]
			if v == w {
				if v == Empty {
					both++
				} else {
					eq++
				}
			}
		}
		m := kb - both
		if m == 0 {
			continue
		}
		q := float64(eq) / float64(m)
		sum += q
		vsum += q * (1 - q) / float64(m)
		res.Scales++
	}
	if res.Scales == 0 {
		res.Below = true
		return res, nil
	}
	res.J = sum / float64(res.Scales)
	res.StdErr = math.Sqrt(vsum) / float64(res.Scales)
	return res, nil
}
