package sketch

import (
	"fmt"
	"math"
)

// HMTEmpty is the value of an HMT one-permutation bin that no element of the
// rounded set reached (package weighted's Empty).
const HMTEmpty = ^uint64(0)

// Packing of HMTParams into Header.Params (bits 52–63 are zero):
//
//	bits 0–23   α·2^24
//	bits 24–29  τ
//	bits 30–35  t (Scales)
//	bits 36–51  L·16
const (
	hmtAlphaQ  = 1 << 24
	hmtLQ      = 16
	hmtMaxT    = 63
	hmtMaxL    = (1<<16 - 1) / hmtLQ
	hmtMaxAbsS = 1 << 60 // |first scale| bound, so scale arithmetic never overflows
)

// HMTParams are the parameters of a Haeupler–Manasse–Talwar sketch
// ("Consistent Weighted Sampling Made Fast, Small, and Easy", section 3.2)
// that two sketches must share to be comparable; they are packed into
// Header.Params of HMT and HMTDep sketches. β = Alpha^(1/Tau) is the ratio of
// consecutive scales.
//
// The zero value is invalid (see Validate). HMTParams is a small value; copy
// it freely.
type HMTParams struct {
	// Alpha is the interestingness threshold α ∈ (0, 1), a multiple of 2^−24:
	// similarities below it may be reported only as "below α".
	Alpha float64
	// Tau is τ, 1 ≤ τ < Scales.
	Tau int
	// Scales is the number t of scales per sketch, 2 ≤ t ≤ 63.
	Scales int
	// L is the redundancy: each scale's rounded set has at least L·k/(t−τ)
	// expected elements. A multiple of 1/16 in [1, 4095].
	L float64
}

// Validate reports whether p can be packed exactly: every field in range and
// Alpha, L on their grids.
func (p HMTParams) Validate() error {
	switch {
	case !(p.Alpha > 0 && p.Alpha < 1) || p.Alpha*hmtAlphaQ != math.Round(p.Alpha*hmtAlphaQ):
		return fmt.Errorf("%w: HMT alpha %v not a multiple of 2^-24 in (0, 1)", ErrInvalid, p.Alpha)
	case p.Scales < 2 || p.Scales > hmtMaxT:
		return fmt.Errorf("%w: HMT scales %d not in [2, %d]", ErrInvalid, p.Scales, hmtMaxT)
	case p.Tau < 1 || p.Tau >= p.Scales:
		return fmt.Errorf("%w: HMT tau %d not in [1, %d)", ErrInvalid, p.Tau, p.Scales)
	case !(p.L >= 1 && p.L <= hmtMaxL) || p.L*hmtLQ != math.Round(p.L*hmtLQ):
		return fmt.Errorf("%w: HMT L %v not a multiple of 1/16 in [1, %d]", ErrInvalid, p.L, hmtMaxL)
	}
	return nil
}

// Pack returns p packed for Header.Params. Only a valid p (see Validate)
// round-trips through Header.HMT.
func (p HMTParams) Pack() uint64 {
	return uint64(math.Round(p.Alpha*hmtAlphaQ))&(hmtAlphaQ-1) |
		uint64(p.Tau&63)<<24 | uint64(p.Scales&63)<<30 |
		(uint64(math.Round(p.L*hmtLQ))&0xffff)<<36
}

// HMT returns the HMT parameters packed in h.Params and the number of
// one-permutation bins per scale, B = (K − 2)/t. It fails with ErrInvalid
// unless h is an HMT or HMTDep header of full 64-bit values whose Params
// unpack to valid HMTParams (with zero high bits) and whose K = 2 + t·B for
// some B ≥ 1.
func (h Header) HMT() (p HMTParams, bins int, err error) {
	if h.Algorithm != HMT && h.Algorithm != HMTDep {
		return p, 0, fmt.Errorf("%w: %v is not an HMT algorithm", ErrInvalid, h.Algorithm)
	}
	if h.Bits != 64 {
		return p, 0, fmt.Errorf("%w: HMT sketches hold full 64-bit values, not %d-bit", ErrInvalid, h.Bits)
	}
	q := h.Params
	p = HMTParams{
		Alpha:  float64(q&(hmtAlphaQ-1)) / hmtAlphaQ,
		Tau:    int(q >> 24 & 63),
		Scales: int(q >> 30 & 63),
		L:      float64(q>>36&0xffff) / hmtLQ,
	}
	if q>>52 != 0 {
		return p, 0, fmt.Errorf("%w: HMT params %#x has high bits set", ErrInvalid, q)
	}
	if err := p.Validate(); err != nil {
		return p, 0, err
	}
	t := uint32(p.Scales)
	if h.K < 2+t || (h.K-2)%t != 0 {
		return p, 0, fmt.Errorf("%w: HMT k = %d is not 2 + %d·bins", ErrInvalid, h.K, t)
	}
	return p, int((h.K - 2) / t), nil
}

// validateHMT checks the two leading values of a non-empty HMT sketch: a
// first scale whose block numbers cannot overflow, and a finite log₂ of the
// total weight.
func validateHMT(v []uint64) error {
	if len(v) == 0 {
		return nil
	}
	if s := int64(v[0]); s > hmtMaxAbsS || s < -hmtMaxAbsS {
		return fmt.Errorf("%w: HMT first scale %d out of range", ErrInvalid, s)
	}
	if l := math.Float64frombits(v[1]); math.IsNaN(l) || math.IsInf(l, 0) {
		return fmt.Errorf("%w: HMT log2 weight %v", ErrInvalid, l)
	}
	return nil
}

// hmtJaccard is Algorithm 3.4 (EstimateJaccard) of Haeupler–Manasse–Talwar
// for two valid HMT sketches with bins one-permutation bins per scale:
//
//   - both empty: J = 1; one empty: Below with J = 0 (the bound below);
//   - the ratio r = min/max of the total weights (2^−|log₂W_a − log₂W_b|)
//     bounds the weighted Jaccard from above (Σmin ≤ min W, Σmax ≥ max W),
//     so r < α is reported as Below with J = r, StdErr = 0;
//   - otherwise, for every scale number i held by both sketches — block
//     i − s_a of a against block i − s_b of b, never position against
//     position — the one-permutation estimate q_i = matches/(B − bins empty
//     in both) is averaged over the scales with B − both > 0:
//     J = mean q_i, StdErr = sqrt(Σ q_i(1−q_i)/m_i)/n (binomial per scale).
//     When r ≥ α the sketches share at least t − τ scales (paper 3.2); if
//     none of them holds any element in either sketch there is no
//     information and J = 0.5, StdErr = 0.5.
func hmtJaccard(a, b []uint64, p HMTParams, bins int) Estimate {
	e := Estimate{Alpha: p.Alpha}
	if len(a) == 0 || len(b) == 0 {
		if len(a) == len(b) {
			e.J = 1
		} else {
			e.Below = true
		}
		return e
	}
	sa, sb := int64(a[0]), int64(b[0])
	la, lb := math.Float64frombits(a[1]), math.Float64frombits(b[1])
	if r := math.Exp2(-math.Abs(la - lb)); r < p.Alpha {
		e.J, e.Below = r, true
		return e
	}
	t := int64(p.Scales)
	var sum, vsum float64
	for i := max(sa, sb); i <= min(sa, sb)+t-1; i++ {
		oa, ob := 2+int(i-sa)*bins, 2+int(i-sb)*bins
		ba, bb := a[oa:oa+bins], b[ob:ob+bins:ob+bins]
		eq, both := 0, 0
		for j, v := range ba {
			if v == bb[j] {
				if v == HMTEmpty {
					both++
				} else {
					eq++
				}
			}
		}
		m := bins - both
		if m == 0 {
			continue
		}
		q := float64(eq) / float64(m)
		sum += q
		vsum += q * (1 - q) / float64(m)
		e.Scales++
	}
	if e.Scales == 0 {
		e.J, e.StdErr = 0.5, 0.5
		return e
	}
	e.J = sum / float64(e.Scales)
	e.StdErr = math.Sqrt(vsum) / float64(e.Scales)
	return e
}

// hmtTotalWeight returns the total weight 2^v[1] of a valid, non-empty HMT
// sketch, or an error when it is outside float64's range.
func hmtTotalWeight(v []uint64) (float64, error) {
	l := math.Float64frombits(v[1])
	w := math.Exp2(l)
	if w == 0 || math.IsInf(w, 0) {
		return 0, fmt.Errorf("%w: total weight 2^%g is outside float64's range", ErrUnsupported, l)
	}
	return w, nil
}
