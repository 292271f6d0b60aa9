package sample

import (
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// oph is one permutation hashing (HMT paper §3; Li, Owen, Zhang 2012): each
// feature is hashed once, h(x) = Mix64(x ⊕ key), the hash range is cut into
// k equal bins (bin = high word of h·k, sketch.OPHBin) and bin j keeps the
// smallest hash falling into it. Empty bins are then filled by optimal
// densification (sketch.Densify, Shrivastava 2017), which keeps
// P(a_j = b_j) = J exact for every slot.
//
// Values are the kept hashes (a densified slot holds a copy of the bin it
// borrowed from). Because the k slots partition one permutation, they sample
// without replacement: for n ≫ k the estimator's variance is about
// J(1−J)/k·(1 − (k−1)/(n−1)), slightly below MinHash's; for small n
// densification repeats bins and the variance grows toward MinHash's and
// above it (measured in oph_test.go). Safe for concurrent use. Cost: one
// hash and one multiply per feature, plus O(k) for densification.
type oph struct {
	h   sketch.Header
	key uint64
}

func newOPH(h sketch.Header) *oph {
	return &oph{h: h, key: rng.Key(h.Seed, uint64(sketch.OPH))}
}

func (s *oph) Header() sketch.Header { return s.h }
func (s *oph) Clone() Sampler        { return s }

func (s *oph) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	if len(fs) == 0 {
		return dst
	}
	k := int(s.h.K)
	dst, v := grow(dst, k)
	for i := range v {
		v[i] = sketch.OPHEmpty
	}
	ophBins(v[:k], fs, s.key)
	sketch.Densify(s.h.Seed, v)
	return dst
}

// ophBins lowers each bin of v to the smallest hash Mix64(id ⊕ key) of
// the features of fs that fall into it. A function of its own so that the
// compiler keeps the loop's variables in registers: inlined into Sketch,
// beside grow's, they were spilled, and each hash went through the stack
// twice.
//
// fs is read in blocks of ophBlock features, and before each block the
// cache lines ophAhead features further on are prefetched (amd64; a no-op
// elsewhere). The loop does about 20 instructions per 16-byte feature, too
// many for the out-of-order window to reach the next lines by itself, and
// the hardware prefetcher stops at every 4 KiB page: on a corpus larger
// than the caches (bench/sketch's 64 MiB) the loop waited on memory for a
// third of its time, in cache it does not (BenchmarkOPHCorpusLarge).
//
//go:noinline
func ophBins(v []uint64, fs []feature.Feature, key uint64) {
	k := uint64(len(v))
	prefetch(fs[:min(len(fs), ophAhead)])
	for len(fs) > 0 {
		n := min(len(fs), ophBlock)
		if len(fs) > ophAhead {
			prefetch(fs[ophAhead:min(len(fs), ophAhead+ophBlock)])
		}
		for _, f := range fs[:n] {
			h := rng.Mix64(f.ID ^ key)
			// Bin = high word of h·k (sketch.OPHBin), < k; keep the
			// minimum without a branch: which feature lowers a bin's
			// minimum is random, so a branch would be mispredicted about
			// once in three features.
			hi, _ := bits.Mul64(h, k)
			v[hi] = min(v[hi], h)
		}
		fs = fs[n:]
	}
}

// ophBlock is the number of features ophBins hashes between two
// prefetches (1 KiB), ophAhead how far ahead of the current block it
// prefetches (2 KiB): the best of 32–128 and 128–512 measured on a 64 MiB
// corpus.
const (
	ophBlock = 64
	ophAhead = 2 * ophBlock
)
