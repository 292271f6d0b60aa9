package sample

import (
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
// It gathers candidates below a falling threshold in a scratch buffer that
// is sorted and cut to k whenever it reaches 4k entries. Not safe for
// concurrent use (scratch); Clone for each goroutine. Cost: one hash per
// feature plus O(k log k · log(n/k)) for the cuts.
type bottomK struct {
	h       sketch.Header
	key     uint64
	scratch []uint64
}

func newBottomK(h sketch.Header) *bottomK {
	return &bottomK{h: h, key: rng.Key(h.Seed, uint64(sketch.BottomK)), scratch: make([]uint64, 0, 4*h.K)}
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
	k := int(s.h.K)
	buf := s.scratch[:0]
	thr := ^uint64(0)
	full := false // buf holds ≥ k distinct values below thr after a cut
	key := s.key
	for _, f := range fs {
		h := rng.Mix64(f.ID ^ key)
		if full && h >= thr {
			continue
		}
		buf = append(buf, h)
		if len(buf) == cap(buf) {
			buf = cut(buf, k)
			if len(buf) == k {
				full, thr = true, buf[k-1]
			}
		}
	}
	buf = cut(buf, k)
	s.scratch = buf[:0]
	return append(dst, buf...)
}
