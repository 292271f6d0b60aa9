package sample

import (
	"math"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// bottomK keeps the k smallest distinct values of one hash h(x) = Mix64(x ⊕
// key) (a bijection), in increasing order: a uniform sample of k features
// without replacement (book ch. 3, "min-k"). Estimate with sketch.Jaccard,
// which restricts both samples to the bottom-k of the union; the result is
// unbiased with hypergeometric variance J(1−J)/k·(N−k)/(N−1) for a union of
// N features.
//
// Threshold filter: the k-th smallest of n uniform hashes is about k/n of
// the range, so Sketch first admits only hashes at most L = (k + 4√k + 4)/n
// of the range, an expected k + 4√k + 4 of them (a 4-sigma margin: fewer
// than k distinct fall below L with probability about 3·10^-4), into a
// scratch buffer of 4k entries, branch-free. It then sorts the few admitted
// values and keeps the k smallest distinct. If fewer than k distinct values
// were admitted (bad luck, or an input with many duplicate features) it
// makes a second pass admitting everything. If the buffer fills, it is
// sorted and cut to k, and the bound falls to the k-th smallest. The output
// is the exact bottom-k whatever the path, so it is the same as version 1's.
//
// Not safe for concurrent use (scratch); Clone for each goroutine. Cost: one
// hash and compare per feature, plus sorting about k + 4√k values.
type bottomK struct {
	h       sketch.Header
	key     uint64
	margin  float64 // expected admitted values in the first pass
	scratch []uint64
}

func newBottomK(h sketch.Header) *bottomK {
	k := float64(h.K)
	return &bottomK{h: h, key: rng.Key(h.Seed, uint64(sketch.BottomK)),
		margin: k + 4*math.Sqrt(k) + 4, scratch: make([]uint64, 4*h.K)}
}

func (s *bottomK) Header() sketch.Header { return s.h }
func (s *bottomK) Clone() Sampler        { return newBottomK(s.h) }

// cut sorts buf, removes duplicates and keeps at most k values.
func cut(buf []uint64, k int) []uint64 {
	slices.Sort(buf)
	buf = slices.Compact(buf)
	if len(buf) > k {
		buf = buf[:k]
	}
	return buf
}

func (s *bottomK) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	if len(fs) == 0 {
		return dst
	}
	lim := uint64(math.MaxUint64)
	if f := s.margin / float64(len(fs)); f < 1 {
		lim = uint64(f * 0x1p64)
	}
	buf := s.below(fs, lim)
	if len(buf) < int(s.h.K) && lim != math.MaxUint64 {
		buf = s.below(fs, math.MaxUint64)
	}
	return append(dst, buf...)
}

// below returns the (at most k) smallest distinct hashes ≤ lim of fs, in
// increasing order, in s.scratch.
func (s *bottomK) below(fs []feature.Feature, lim uint64) []uint64 {
	k := int(s.h.K)
	buf := s.scratch[:cap(s.scratch)]
	key := s.key
	c := 0
	for _, f := range fs {
		h := rng.Mix64(f.ID ^ key)
		buf[c] = h
		_, over := bits.Sub64(lim, h, 0) // 1 iff h > lim
		c += int(1 - over)
		if c == len(buf) {
			c = len(cut(buf, k))
			if c == k {
				lim = buf[k-1] // a duplicate of it may enter; cut removes it
			}
		}
	}
	return cut(buf[:c], k)
}
