package weighted

import (
	"fmt"

	"github.com/neardup/neardup/sketch"
)

// Version is the sampler version written into sketch headers; it changes
// whenever any sampler's output for the same input changes.
const Version = 1

// Header returns the header of CWS sketches: Algorithm sketch.CWS, K
// samples, full 64-bit values, Params 0.
func (c *CWS) Header() sketch.Header {
	alg := sketch.CWS
	switch c.beta {
	case BetaOblivious:
		alg = sketch.CWSOblivious
	case BetaUnary:
		alg = sketch.CWSUnary
	}
	return sketch.Header{Algorithm: alg, Version: Version, Seed: c.seed, K: uint32(c.k), Bits: 64, Features: c.features}
}

// Header returns the header of ICWS sketches: Algorithm sketch.ICWS, K
// samples, full 64-bit values, Params 0.
func (c *ICWS) Header() sketch.Header {
	return sketch.Header{Algorithm: sketch.ICWS, Version: Version, Seed: c.seed, K: uint32(c.k), Bits: 64, Features: c.features}
}

// Header returns the header of HMT sketches: Algorithm sketch.HMTDep
// (sketch.HMT with Options.Independent), K = Len() values, and Params
// packing the parameters two sketches must share (sketch.HMTParams: α, τ,
// t, L; see sketch.HMTParams.Pack).
func (h *HMT) Header() sketch.Header { return h.hdr }

func (h *HMT) header() sketch.Header {
	alg := sketch.HMTDep
	if h.indep {
		alg = sketch.HMT
	}
	p := sketch.HMTParams{Alpha: h.alpha, Tau: h.tau, Scales: h.t, L: h.l, BinaryBeta: h.binary}.Pack()
	return sketch.Header{Algorithm: alg, Version: Version, Seed: h.seed, K: uint32(h.Len()), Bits: 64, Features: h.features, Params: p}
}

// Result is a weighted Jaccard estimate: sketch.Estimate with the number of
// scales. When Below is true the similarity is known to be below Alpha
// (HMT: the total weights differ by more than a factor 1/α, or one set is
// empty) and J is not an estimate but an upper bound below Alpha — the
// ratio of the smaller to the larger total weight — with StdErr 0.
// Otherwise J estimates the weighted Jaccard similarity and StdErr its
// standard error (binomial over the compared samples). Scales is the
// number of scales averaged (HMT; 0 when Below) or 1 (CWS, ICWS). Alpha is
// α for HMT, 0 otherwise.
type Result struct {
	J, StdErr float64
	Below     bool
	Alpha     float64
	Scales    int
}

// EstimateJaccard estimates the weighted Jaccard similarity Σmin/Σmax of
// the weighted sets behind two sketches of this package. It is
// sketch.Jaccard, which implements every algorithm: for CWS and ICWS
// sketches the fraction of equal samples; for HMT sketches Algorithm 3.4 —
// the average over the scales both sketches hold (compared by scale number)
// of the one-permutation estimate matches/(B − bins empty in both), or
// Below when the weight ratio rules out similarity ≥ α. Headers must be
// equal (error wrapping sketch.ErrMismatch), and sketches of other
// algorithms give an error wrapping ErrMismatch. Cost O(len(Values)), no
// allocation.
func EstimateJaccard(a, b *sketch.Sketch) (Result, error) {
	if err := a.Header.Check(b.Header); err != nil {
		return Result{}, err
	}
	if !a.Header.Algorithm.IsWeighted() {
		return Result{}, fmt.Errorf("%w: %v is not a weighted algorithm", ErrMismatch, a.Header.Algorithm)
	}
	e, err := sketch.Jaccard(a, b)
	if err != nil {
		return Result{}, err
	}
	return result(a.Header.Algorithm, e), nil
}

func result(alg sketch.Algorithm, e sketch.Estimate) Result {
	r := Result{J: e.J, StdErr: e.StdErr, Below: e.Below, Alpha: e.Alpha, Scales: e.Scales}
	if alg == sketch.CWS || alg == sketch.ICWS {
		r.Scales = 1
	}
	return r
}

// Estimate is EstimateJaccard for two value slices made by h.Sketch (empty
// or of length Len(), else an error wrapping ErrSketchLength). It does not
// allocate.
func (h *HMT) Estimate(a, b []uint64) (Result, error) {
	n := h.Len()
	if (len(a) != 0 && len(a) != n) || (len(b) != 0 && len(b) != n) {
		return Result{}, fmt.Errorf("%w: %d and %d values, want %d", ErrSketchLength, len(a), len(b), n)
	}
	sa := sketch.Sketch{Header: h.hdr, Values: a}
	sb := sketch.Sketch{Header: h.hdr, Values: b}
	e, err := sketch.Jaccard(&sa, &sb)
	if err != nil {
		return Result{}, err
	}
	return result(h.hdr.Algorithm, e), nil
}
