// Package rng provides keyed, reproducible random streams and hash mixers:
// the only source of randomness in neardup.
//
// Consistent sampling (Manasse, "On the Efficient Determination of Most Near
// Neighbors" (the book) ch. 3–5) needs randomness that is a pure function of
// its inputs: two machines that sketch the same feature with the same seed
// must draw the same numbers, today and after an upgrade. So nothing here
// reads a clock, a global generator or the platform: every value is computed
// from 64-bit keys with fixed integer arithmetic (SplitMix64 increments and
// the Stafford "Mix13" finalizer, as used by SplitMix64 and java.util.
// SplittableRandom), identical on every architecture. Golden vectors in the
// tests pin the outputs, so stored sketches stay valid.
//
// This is not a cryptographic generator: an adversary who knows the seed can
// construct collisions. Seeds are parameters, not secrets.
package rng

import "math/bits"

// golden is the SplitMix64 increment, 2^64 / phi rounded to odd.
const golden = 0x9e3779b97f4a7c15

// Mix64 is a bijective 64-bit finalizer (Stafford's Mix13). Every output bit
// depends on every input bit; it is the building block of all hashing here.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Hash returns a well-mixed 64-bit hash of x under seed. For a fixed seed it
// is a bijection of x, so distinct features never collide; distinct seeds
// give functions that behave as independent random permutations for
// min-hashing purposes.
func Hash(seed, x uint64) uint64 {
	return Mix64(x ^ Mix64(seed+golden))
}

// Hash2 hashes the pair (a, b) under seed. It is not a bijection of the pair,
// but its outputs for distinct pairs collide with probability about 2^-64.
func Hash2(seed, a, b uint64) uint64 {
	return Mix64(Hash(seed, a) ^ Mix64(b+0xbb67ae8584caa73b))
}

// Key derives a sub-seed from a seed and a sequence of labels, so that
// independent uses of one user seed (sampler slots, scales, tables) never
// share randomness. Key(s) with no labels differs from s.
func Key(seed uint64, labels ...uint64) uint64 {
	k := Mix64(seed ^ 0x6e65617264757021) // "neardup!"
	for _, l := range labels {
		k = Mix64(k + golden + Mix64(l+golden))
	}
	return k
}

// Stream is a reproducible stream of random 64-bit words (SplitMix64). The
// zero value is a valid stream keyed by 0. A Stream is a small value: copy it
// to fork, pass a pointer to advance. Not safe for concurrent use.
type Stream struct {
	state uint64
}

// New returns the stream keyed by key. Streams with different keys are
// statistically independent.
func New(key uint64) Stream {
	return Stream{state: Mix64(key)}
}

// Uint64 returns the next word of the stream. Cost: a few ns, no allocation.
func (s *Stream) Uint64() uint64 {
	s.state += golden
	return Mix64(s.state)
}

// Float64 returns a uniform float64 in [0, 1) with 53 random bits.
func (s *Stream) Float64() float64 {
	return float64(s.Uint64()>>11) * 0x1p-53
}

// Open01 returns a uniform float64 in the open interval (0, 1), never 0, so
// its logarithm is always finite.
func (s *Stream) Open01() float64 {
	return ToFloat(s.Uint64())
}

// Intn returns a uniform integer in [0, n) without modulo bias (Lemire's
// multiply-shift with rejection). It panics if n == 0.
func (s *Stream) Intn(n uint64) uint64 {
	if n == 0 {
		panic("rng: Intn(0)")
	}
	hi, lo := bits.Mul64(s.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.Uint64(), n)
		}
	}
	return hi
}

// ToFloat maps a 64-bit hash to a uniform float64 in the open interval
// (0, 1), for samplers that need a real-valued hash of a key. The top
// 2^11 hashes, whose midpoint 1 - 2^-54 would round to 1, give the largest
// float64 below 1 instead.
func ToFloat(h uint64) float64 {
	return min((float64(h>>11)+0.5)*0x1p-53, 1-0x1p-53)
}
