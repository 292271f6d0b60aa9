package sample

import (
	"errors"
	"fmt"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
)

// Sampler draws a consistent sample of a feature set.
//
// Sketch appends the sample values of the set fs to dst and returns the
// extended slice: K values for slot-wise algorithms (none when fs is empty),
// up to K increasing hashes for BottomK, all kept hashes for Proportional.
// Duplicate IDs in fs do not change the result; the order of fs never does.
// Sketch does not allocate once dst has capacity and the sampler is warm.
// Header describes the values (see package sketch).
//
// Concurrency: unless a sampler's documentation says otherwise, Sketch uses
// scratch space inside the sampler, so one Sampler must not be used by
// several goroutines at once; samplers are cheap to create, make one per
// goroutine (or use Clone).
type Sampler interface {
	Header() sketch.Header
	Sketch(dst []uint64, fs []feature.Feature) []uint64
}

// Cloner is implemented by every sampler of this package: Clone returns an
// independent sampler with the same header, safe to use concurrently with
// the original.
type Cloner interface {
	Clone() Sampler
}

// Errors.
var (
	// ErrParam means a constructor argument or option is out of range.
	ErrParam = errors.New("sample: invalid parameter")
)

// MaxK is the largest supported number of slots.
const MaxK = 1 << 16

// Option configures a sampler built by New.
type Option func(*options)

type options struct {
	features uint64
	modulus  uint64
	block    int
	bufLen   int
}

// WithFeatures records the hash of the feature configuration in the header
// (sketch.Header.Features). The default is 0 (unspecified).
func WithFeatures(h uint64) Option { return func(o *options) { o.features = h } }

// WithModulus sets Proportional's modulus m: a feature is kept when its hash
// is ≡ 0 mod m, so about n/m features are kept. The default is 64.
func WithModulus(m uint64) Option { return func(o *options) { o.modulus = m } }

// WithBlock sets LazyBitsBatched's block size m, 64 or 128. The default is
// 128.
func WithBlock(m int) Option { return func(o *options) { o.block = m } }

// WithBufLen sets the per-slot candidate buffer of Prefix and LazyBits
// (book 3.2 BUFLEN). It affects speed (and the tie bits counted) only,
// never the output; a buffer holds at least two candidates, so 1 acts as 2.
// The default is 16.
func WithBufLen(n int) Option { return func(o *options) { o.bufLen = n } }

// New returns the sampler for alg with k slots and the given seed. For
// Proportional k is ignored (the modulus comes from WithModulus). It returns
// ErrParam for k outside [1, MaxK], an unknown or weighted algorithm, or bad
// options.
func New(alg sketch.Algorithm, k int, seed uint64, opts ...Option) (Sampler, error) {
	o := options{modulus: 64, block: 128, bufLen: 16}
	for _, f := range opts {
		f(&o)
	}
	if alg != sketch.Proportional && (k < 1 || k > MaxK) {
		return nil, fmt.Errorf("%w: k = %d not in [1, %d]", ErrParam, k, MaxK)
	}
	if o.bufLen < 1 || o.bufLen > 1024 {
		return nil, fmt.Errorf("%w: buffer length %d not in [1, 1024]", ErrParam, o.bufLen)
	}
	h := sketch.Header{Algorithm: alg, Version: Version(alg), Seed: seed, K: uint32(k), Bits: 64, Features: o.features}
	switch alg {
	case sketch.MinHash:
		return newMinHash(h), nil
	case sketch.Prefix:
		return newPrefix(h, o.bufLen), nil
	case sketch.LazyBits:
		return newLazy(h, o.bufLen), nil
	case sketch.LazyBitsBatched:
		if o.block != 64 && o.block != 128 {
			return nil, fmt.Errorf("%w: block %d not 64 or 128", ErrParam, o.block)
		}
		h.Params = uint64(o.block)
		return newBatched(h, o.bufLen), nil
	case sketch.BottomK:
		return newBottomK(h), nil
	case sketch.Proportional:
		if o.modulus < 1 || o.modulus > 1<<62 {
			return nil, fmt.Errorf("%w: modulus %d", ErrParam, o.modulus)
		}
		h.K, h.Params = 0, o.modulus
		return newProportional(h), nil
	case sketch.OPH:
		return newOPH(h), nil
	case sketch.SuperMinHash:
		return newSuperMinHash(h), nil
	}
	return nil, fmt.Errorf("%w: algorithm %v is not an unweighted sampler", ErrParam, alg)
}

// versions holds the current version of each sampler's output
// (sketch.Header.Version). A version changes whenever a sampler's output for
// the same (seed, k, options) changes, so that sketches made before and
// after never compare as equal; testdata/golden.json pins each version.
var versions = [...]uint8{
	sketch.MinHash:         2, // v2: multiply-add slot hashes (v1: 128-bit fold)
	sketch.Prefix:          1,
	sketch.LazyBits:        1,
	sketch.LazyBitsBatched: 1,
	sketch.BottomK:         1,
	sketch.Proportional:    1,
	sketch.OPH:             1,
	sketch.SuperMinHash:    2, // v2: one word per step, step 0 from the hash (v1: two stream words)
}

// Version returns the version New writes into the header of alg's sketches
// (0 for an algorithm this package does not implement).
func Version(alg sketch.Algorithm) uint8 {
	if int(alg) < len(versions) {
		return versions[alg]
	}
	return 0
}

// Make returns the sketch of fs drawn by s, with Size set to its
// sketch.Cardinality estimate (0 when the algorithm has none). It allocates
// the result; use Sampler.Sketch in hot loops.
func Make(s Sampler, fs []feature.Feature) *sketch.Sketch {
	sk := &sketch.Sketch{Header: s.Header(), Values: s.Sketch(nil, fs)}
	if c, err := sketch.Cardinality(sk); err == nil {
		sk.Size = c
	}
	return sk
}

// Counter counts the random bits a lazy sampler (Prefix, LazyBits,
// LazyBitsBatched) consumed, in the book's cost model (ch. 3.2, 4): bits of
// pseudo-randomness examined per input feature per sample.
type Counter struct {
	Inputs  uint64 // features processed (distinct or not)
	Samples uint64 // Inputs × k
	Bits    uint64 // random bits examined, including tie-breaking tails
}

// PerInputPerSample returns Bits/Samples.
func (c Counter) PerInputPerSample() float64 {
	if c.Samples == 0 {
		return 0
	}
	return float64(c.Bits) / float64(c.Samples)
}

// BitCounter is implemented by the samplers that count random bits.
// ResetCounter zeroes the counter.
type BitCounter interface {
	Counter() Counter
	ResetCounter()
}

// grow extends dst by n elements, reusing its capacity, and returns the
// extended slice and the new tail.
func grow(dst []uint64, n int) ([]uint64, []uint64) {
	l := len(dst)
	if cap(dst)-l < n {
		nd := make([]uint64, l, l+n+l/4)
		copy(nd, dst)
		dst = nd
	}
	dst = dst[:l+n]
	return dst, dst[l:]
}
