package sketch

import (
	"fmt"
	"math"
)

// HMTEmpty is the value of an HMT one-permutation bin that no element of the
// rounded set reached (package weighted's Empty).
const HMTEmpty = ^uint64(0)

// Packing of HMTParams into Header.Params (bits 53–62 are zero):
//
//	bits 0–23   α·2^24
//	bits 24–29  τ
//	bits 30–35  t (Scales)
//	bits 36–51  L·16
//	bit  52     BinaryBeta (footnote 1's β = 2^(−1/m))
//	bit  63     ParamXORPair: a ½-bit sketch (CompressHMTPairs)
const (
	hmtBinaryBeta = 1 << 52
	hmtAlphaQ     = 1 << 24
	hmtLQ         = 16
	hmtMaxT       = 63
	hmtMaxL       = (1<<16 - 1) / hmtLQ
	hmtMaxAbsS    = 1 << 60 // |first scale| bound, so scale arithmetic never overflows
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
	// BinaryBeta selects footnote 1 of section 3.2: instead of
	// β = α^(1/τ), the ratio of consecutive scales is β = 2^(−1/m) for the
	// least integer m ≥ τ/log₂(1/α), a β in [α^(1/τ), α^(1/(τ+1))) that
	// makes scaling a multiplication by one of m constants and an exponent
	// shift. It exists when that m is below (τ+1)/log₂(1/α) (always for
	// α ≥ 1/2).
	BinaryBeta bool
}

// BinaryBetaM returns the m of BinaryBeta's β = 2^(−1/m), or 0 when no
// integer m gives a β in [α^(1/τ), α^(1/(τ+1))).
func (p HMTParams) BinaryBetaM() int {
	c := 1 / math.Log2(1/p.Alpha)
	m := math.Ceil(float64(p.Tau)*c - 1e-12)
	if !(m >= 1 && m < float64(p.Tau+1)*c && m <= 1<<20) {
		return 0
	}
	return int(m)
}

// Log2InvBeta returns log₂(1/β), β the ratio of consecutive scales:
// log₂(1/α)/τ, or 1/m with BinaryBeta.
func (p HMTParams) Log2InvBeta() float64 {
	if p.BinaryBeta {
		if m := p.BinaryBetaM(); m > 0 {
			return 1 / float64(m)
		}
	}
	return -math.Log2(p.Alpha) / float64(p.Tau)
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
	case p.BinaryBeta && p.BinaryBetaM() == 0:
		return fmt.Errorf("%w: HMT alpha %v, tau %d: no beta = 2^(-1/m) in [alpha^(1/tau), alpha^(1/(tau+1)))", ErrInvalid, p.Alpha, p.Tau)
	}
	return nil
}

// Pack returns p packed for Header.Params. Only a valid p (see Validate)
// round-trips through Header.HMT.
func (p HMTParams) Pack() uint64 {
	q := uint64(math.Round(p.Alpha*hmtAlphaQ))&(hmtAlphaQ-1) |
		uint64(p.Tau&63)<<24 | uint64(p.Scales&63)<<30 |
		(uint64(math.Round(p.L*hmtLQ))&0xffff)<<36
	if p.BinaryBeta {
		q |= hmtBinaryBeta
	}
	return q
}

// HMT returns the HMT parameters packed in h.Params and the number of
// one-permutation bins per scale, B = (K − 2)/t, of the uncompressed sketch.
// It fails with ErrInvalid unless h is an HMT or HMTDep header whose Params
// unpack to valid HMTParams (with zero bits 53–62) and whose K = 2 + t·B
// for some B ≥ 1, of full 64-bit values or b-bit ones (CompressHMT); a
// ½-bit sketch (ParamXORPair, CompressHMTPairs) has b < 64 and even B.
func (h Header) HMT() (p HMTParams, bins int, err error) {
	if h.Algorithm != HMT && h.Algorithm != HMTDep {
		return p, 0, fmt.Errorf("%w: %v is not an HMT algorithm", ErrInvalid, h.Algorithm)
	}
	if !validBits(h.Bits) {
		return p, 0, fmt.Errorf("%w: HMT bits %d not in {1,2,4,8,16,32,64}", ErrInvalid, h.Bits)
	}
	xor := h.Params&ParamXORPair != 0
	if xor && h.Bits == 64 {
		return p, 0, fmt.Errorf("%w: XOR-pair HMT sketch must be b-bit", ErrInvalid)
	}
	q := h.Params &^ ParamXORPair
	p = HMTParams{
		Alpha:      float64(q&(hmtAlphaQ-1)) / hmtAlphaQ,
		Tau:        int(q >> 24 & 63),
		Scales:     int(q >> 30 & 63),
		L:          float64(q>>36&0xffff) / hmtLQ,
		BinaryBeta: q&hmtBinaryBeta != 0,
	}
	if q>>53 != 0 {
		return p, 0, fmt.Errorf("%w: HMT params %#x has high bits set", ErrInvalid, q)
	}
	if err := p.Validate(); err != nil {
		return p, 0, err
	}
	t := uint32(p.Scales)
	if h.K < 2+t || (h.K-2)%t != 0 {
		return p, 0, fmt.Errorf("%w: HMT k = %d is not 2 + %d·bins", ErrInvalid, h.K, t)
	}
	bins = int((h.K - 2) / t)
	if xor && bins%2 != 0 {
		return p, 0, fmt.Errorf("%w: XOR-pair HMT sketch with odd bins %d", ErrInvalid, bins)
	}
	return p, bins, nil
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
