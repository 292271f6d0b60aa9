package lsh

import "github.com/neardup/neardup/internal/rng"

// Key returns lookup key number c (0 <= c < NumKeys) of a sketch: the same
// value as Keys(nil, samples)[c], computed from the m bands of combination c
// alone (m·r sample hashes). Batch deduplication sorts one key at a time
// over a whole corpus with it, so only one key per document is ever held in
// memory. samples must hold at least r*b values. No allocation.
func (s *Scheme) Key(c int, samples []uint64) uint64 {
	r, m := s.p.R, s.p.M
	if len(samples) < r*s.p.B {
		panic("lsh: Key needs r*b samples")
	}
	h := s.comboSeed[c]
	for _, j := range s.combos[c*m : (c+1)*m] {
		h = rng.Hash(h, s.band(int(j), samples[int(j)*r:(int(j)+1)*r]))
	}
	return h
}
