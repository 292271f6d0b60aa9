package sample

import (
	"slices"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// proportional keeps every feature whose hash h(x) = Mix64(x ⊕ key) is ≡ 0
// mod m (book ch. 3): about n/m values, so the sketch grows with the
// document, and kept(A∪B) = kept(A) ∪ kept(B). sketch.Jaccard estimates
// |kept(A)∩kept(B)|/|kept(A)∪kept(B)|, a ratio estimator with variance about
// J(1−J)/u for u kept union values (given u it is hypergeometric).
//
// Values are the kept hashes in increasing order (Header.Params = m,
// Header.K = 0). Safe for concurrent use; Sketch sorts in dst. Cost: one
// hash per feature plus sorting the kept n/m.
type proportional struct {
	h    sketch.Header
	key  uint64
	m    uint64
	mask uint64 // m−1 when m is a power of two, else 0
}

func newProportional(h sketch.Header) *proportional {
	s := &proportional{h: h, key: rng.Key(h.Seed, uint64(sketch.Proportional)), m: h.Params}
	if s.m&(s.m-1) == 0 {
		s.mask = s.m - 1
	}
	return s
}

func (s *proportional) Header() sketch.Header { return s.h }
func (s *proportional) Clone() Sampler        { return s }

func (s *proportional) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	start := len(dst)
	key := s.key
	if s.mask != 0 || s.m == 1 {
		for _, f := range fs {
			if h := rng.Mix64(f.ID ^ key); h&s.mask == 0 {
				dst = append(dst, h)
			}
		}
	} else {
		for _, f := range fs {
			if h := rng.Mix64(f.ID ^ key); h%s.m == 0 {
				dst = append(dst, h)
			}
		}
	}
	kept := dst[start:]
	slices.Sort(kept)
	return dst[:start+len(slices.Compact(kept))]
}
