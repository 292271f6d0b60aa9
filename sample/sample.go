package sample

import (
	"errors"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
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
	// ErrParam means a Config field is out of range.
	ErrParam = errors.New("sample: invalid parameter")
)

// MaxK is the largest supported number of slots.
const MaxK = 1 << 16

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

// Make returns the sketch of fs drawn by s, with Size set: for the
// samplers of package weighted, the exact total weight Σw of fs (present
// weights only; weighted.TotalWeight), the size sketch.Containment needs and
// the only source of it for CWS and ICWS sketches; for the others, the
// sketch.Cardinality estimate (0 when the algorithm has none). It allocates
// the result; use Sampler.Sketch (or a Sketcher) in hot loops.
func Make(s Sampler, fs []feature.Feature) *sketch.Sketch {
	sk := &sketch.Sketch{Header: s.Header(), Values: s.Sketch(nil, fs)}
	if w, ok := s.(interface{ LogWeights() bool }); ok && sk.Header.Algorithm.IsWeighted() {
		sk.Size = weighted.TotalWeight(fs, w.LogWeights())
		return sk
	}
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
