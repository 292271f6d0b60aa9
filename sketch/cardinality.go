package sketch

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/neardup/neardup/internal/rng"
)

// Cardinality estimates the number of distinct features of the set sketched
// by s from its values alone:
//
//   - MinHash, Prefix, LazyBits, LazyBitsBatched: Flajolet–Martin over the k
//     slot minima mapped to uniforms u_i in (0, 1): 1/mean(u) − 1 (lecture
//     notes, "distinct elements"); an (ε, δ)-estimate when k ≥ 4/(ε²δ).
//   - BottomK: (k−1)/U_(k), U_(k) the k-th smallest hash as a uniform; the
//     exact count when the sketch holds fewer than k values.
//   - Proportional: (number kept)·m.
//   - OPH, SuperMinHash: each slot whose own minimum is known (a non-densified
//     OPH bin; a SuperMinHash slot with value < 1) is the minimum of about
//     Poisson(n/k) uniforms, so the censored-exponential maximum likelihood
//     gives n ≈ k·(c−1)/Σ min(u_j, 1) over all k slots, c of them uncensored.
//
// For weighted sketches it is the total weight Σw instead:
//
//   - HMT, HMTDep: 2^Values[1], the total weight the sketch records (exact up
//     to rounding of its logarithm); ErrUnsupported when it is outside
//     float64's range (weights given as logarithms can exceed it).
//   - CWS, ICWS: ErrUnsupported — a value is a hash of a sample (x, y) and
//     keeps nothing of the weight; set Sketch.Size instead (sample.Make).
//
// b-bit and XOR-pair sketches give ErrUnsupported. An empty sketch has
// cardinality 0. Cost: O(len(Values)), no allocation.
func Cardinality(s *Sketch) (float64, error) {
	h := s.Header
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if h.Bits != 64 || h.Params&ParamXORPair != 0 || h.Algorithm == CWS || h.Algorithm == ICWS {
		return 0, fmt.Errorf("%w: cardinality of %v b=%d sketches", ErrUnsupported, h.Algorithm, h.Bits)
	}
	v := s.Values
	if len(v) == 0 {
		return 0, nil
	}
	if h.Algorithm == HMT || h.Algorithm == HMTDep {
		return hmtTotalWeight(v)
	}
	switch h.Algorithm {
	case BottomK:
		if len(v) < int(h.K) {
			return float64(len(v)), nil
		}
		return float64(len(v)-1) / toUnit(v[len(v)-1]), nil
	case Proportional:
		return float64(len(v)) * float64(h.Params&paramMask), nil
	case OPH, SuperMinHash:
		k := len(v)
		var sum float64
		c := 0
		for j, x := range v {
			u, ok := censored(h.Algorithm, j, k, x)
			if ok {
				c++
				sum += u
			} else {
				sum++
			}
		}
		if c <= 1 {
			return float64(c), nil
		}
		return float64(k) * float64(c-1) / sum, nil
	default:
		var sum float64
		for _, x := range v {
			sum += Uniform(h, x)
		}
		return float64(len(v))/sum - 1, nil
	}
}

func toUnit(x uint64) float64 { return rng.ToFloat(x) }

// censored maps slot j's value of an OPH or SuperMinHash sketch to the
// position of its own minimum within the slot, if the slot has one.
func censored(a Algorithm, j, k int, x uint64) (float64, bool) {
	if a == OPH {
		hi, lo := bits.Mul64(x, uint64(k))
		if int(hi) != j || x == OPHEmpty {
			return 1, false
		}
		return toUnit(lo), true
	}
	b := uint(bits.Len(uint(k - 1)))
	if b > 0 && x>>(64-b) != 0 {
		return 1, false
	}
	return toUnit(x << b), true
}

// Uniform maps a full sample value of a MinHash, Prefix, LazyBits or
// LazyBitsBatched sketch to the uniform number in (0, 1) whose minimum over
// the set the slot holds (the sampler's order is the order of these numbers).
// It returns NaN for other algorithms.
func Uniform(h Header, x uint64) float64 {
	switch h.Algorithm {
	case MinHash, Prefix:
		return toUnit(x)
	case LazyBits:
		r := 255 - int(x>>56)
		return lazyUnit(r, x)
	case LazyBitsBatched:
		r := 127 - int(x>>56&127)
		p := BatchedLuck(int(h.Params & paramMask))
		u := lazyUnit(r, x)
		if x>>63 == 0 {
			return p * u
		}
		return p + (1-p)*u
	}
	return math.NaN()
}

// lazyUnit is the binary fraction 0.0…01ttt with r−1 zeros, then a one,
// then the 56 tail bits of x.
func lazyUnit(r int, x uint64) float64 {
	frac := float64(x&(1<<56-1)) * 0x1p-56
	return math.Ldexp(1+frac, -r)
}

// BatchedLuck is the probability p = 1 − e^(−1/m) that a slot's virtual
// biased leading bit is a zero (the feature is "lucky" for that slot) in a
// LazyBitsBatched sketch with block size m; all m slots of a block are
// unlucky together with probability 1/e (book 4.2).
func BatchedLuck(m int) float64 {
	if m <= 0 {
		return math.NaN()
	}
	return -math.Expm1(-1 / float64(m))
}
