package sketch

import (
	"fmt"
	"math"
)

// CompressBinsXOR appends to dst the XOR-of-g version of one block of bins
// of scale number scale (HMT section 3.3, for α near 1: "one can take 10
// b-bit values and just store their XOR, thus saving a factor of 10 … we
// would get an estimate of Sim^10"): value j is the low b bits of the remix
// of bins[g·j] XOR … XOR bins[g·j+g−1], b in {1, 2, 4, 8, 16, 32}, g ≥ 2,
// len(bins) a multiple of g. Two values agree beyond chance only when all g
// bins do. g = 2 gives exactly CompressBins with xorPairs. It also serves
// any slot-wise full-value samples (CWS, ICWS values), whose slots are
// independent. No allocation beyond dst.
func CompressBinsXOR(dst, bins []uint64, seed uint64, scale int64, b, g int) ([]uint64, error) {
	if b < 1 || b >= 64 || !validBits(uint8(b)) {
		return dst, fmt.Errorf("%w: b = %d not in {1,2,4,8,16,32}", ErrUnsupported, b)
	}
	if g < 2 || len(bins)%g != 0 {
		return dst, fmt.Errorf("%w: XOR of g = %d values needs g ≥ 2 dividing the %d bins", ErrUnsupported, g, len(bins))
	}
	mask := uint64(1)<<b - 1
	for j := 0; j < len(bins)/g; j++ {
		var x uint64
		for _, v := range bins[g*j : g*(j+1)] {
			x ^= v
		}
		dst = append(dst, binRemix(seed, scale, j, x)&mask)
	}
	return dst, nil
}

// BinsJaccardXOR is the estimator of two blocks made by CompressBinsXOR
// with the same b and g: a value agrees with probability
// Q = J^g + (1 − J^g)·2^−b when the g bins agree independently with
// probability J, so θ = (Q − 2^−b)/(1 − 2^−b) estimates J^g (unbiased)
// and J = θ^(1/g), clamped to [0, 1]. StdErr is the delta method's
// SE(θ)/(g·J^(g−1)) (or SE(θ)^(1/g) at J = 0), capped at 1. Blocks of
// different lengths, an empty block, bad b or g < 2 give ErrInvalid. For J
// near 1 this stores fewer bits for the same error: at J = 0.95, g = 10,
// b = 1 the variance per stored bit is about a sixth of plain 1-bit's.
func BinsJaccardXOR(a, b []uint64, bits, g int) (Estimate, error) {
	if len(a) != len(b) || len(a) == 0 {
		return Estimate{}, fmt.Errorf("%w: blocks of %d and %d values", ErrInvalid, len(a), len(b))
	}
	if bits < 1 || bits >= 64 || !validBits(uint8(bits)) || g < 2 {
		return Estimate{}, fmt.Errorf("%w: bits %d, g %d", ErrInvalid, bits, g)
	}
	eq := 0
	for j, v := range a {
		if v == b[j] {
			eq++
		}
	}
	th, se := XORTheta(eq, len(a), bits)
	j := math.Pow(math.Max(0, math.Min(1, th)), 1/float64(g))
	if j > 0 {
		se /= float64(g) * math.Pow(j, float64(g-1))
	} else {
		se = math.Pow(se, 1/float64(g))
	}
	return Estimate{J: j, StdErr: math.Min(se, 1)}, nil
}

// XORTheta returns the unclamped unbiased estimate θ = (Q − 2^−b)/(1 − 2^−b)
// of J^g from eq agreeing values of m (BinsJaccardXOR), and its binomial
// standard error; it is the form to average over many pairs.
func XORTheta(eq, m, bits int) (theta, se float64) {
	q := float64(eq) / float64(m)
	p := math.Ldexp(1, -bits)
	return (q - p) / (1 - p), math.Sqrt(q*(1-q)/float64(m)) / (1 - p)
}
