package sample

import (
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// minHash is the reference sampler: k independent hash functions, slot i
// keeps min_x h_i(x) (book 3.2, the first GetSamples loop).
//
// Hash family: each feature is hashed once, y = rng.Hash(seed, x) (a
// bijection), and slot i applies h_i(y) = fold(y XOR a_i, m_i), where
// fold(u, m) = hi ⊕ lo of the 128-bit product u·m (the "mum" mix of
// wyhash) and a_i, m_i (m_i odd) are per-slot keys from rng. That is one
// multiply per feature-slot. Its collision rate, variance, independence
// across slots and uniformity are proven in minhash_test.go.
//
// Values: v_i = min_x h_i(x). Sketch is read-only on the sampler, so a
// minHash is safe for concurrent use. Cost: n·k multiplies.
type minHash struct {
	h    sketch.Header
	key  uint64
	keys []slotKey
}

type slotKey struct{ a, m uint64 }

func newMinHash(h sketch.Header) *minHash {
	s := &minHash{h: h, key: rng.Key(h.Seed, uint64(sketch.MinHash)), keys: make([]slotKey, h.K)}
	st := rng.New(rng.Key(h.Seed, uint64(sketch.MinHash), 1))
	for i := range s.keys {
		s.keys[i] = slotKey{a: st.Uint64(), m: st.Uint64() | 1}
	}
	return s
}

func (s *minHash) Header() sketch.Header { return s.h }
func (s *minHash) Clone() Sampler        { return s }

func fold(u, m uint64) uint64 {
	hi, lo := bits.Mul64(u, m)
	return hi ^ lo
}

func (s *minHash) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	if len(fs) == 0 {
		return dst
	}
	dst, v := grow(dst, len(s.keys))
	keys := s.keys[:len(v)]
	for i := range v {
		v[i] = ^uint64(0)
	}
	for _, f := range fs {
		y := rng.Hash(s.key, f.ID)
		for i, k := range keys {
			h := fold(y^k.a, k.m)
			if h < v[i] {
				v[i] = h
			}
		}
	}
	return dst
}
