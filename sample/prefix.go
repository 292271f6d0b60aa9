package sample

import (
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// prefix is AltaVista's scheme (book 3.2): one 64-bit hash per feature and
// group of eight slots gives the 8-bit prefixes of those eight slots; only
// features tying the smallest prefix of a slot enter that slot's bounded
// buffer (duplicates skipped), and ties are resolved with a full per-slot
// tail hash (ResolveBuf). The slot's order on features is (prefix, tail), a
// fixed total order, so sampling is consistent and uniform.
//
// Value of slot i: prefix<<56 | tail>>8 (the top 64 bits of the binary
// fraction the two hashes spell). Bits counted (Counter): 8 per prefix plus
// 64 per tail evaluated to break ties — the book's 65/64 bytes per sample in
// the limit. The winners' tails computed once per slot for the output value
// are not counted (the book outputs the feature itself). Not safe for
// concurrent use (scratch); Clone for each goroutine.
//
// Cost: one hash per feature and group of eight slots; the eight prefixes
// are checked against the eight slots' best prefixes at once (anyByteLE),
// and only groups where some prefix ties or beats its slot's best (rare once
// the bests reach 0 or 1) are examined byte by byte.
type prefix struct {
	h      sketch.Header
	key    uint64
	gkeys  []uint64 // per group of 8 slots
	packed []uint64 // per group: the slots' best prefixes, one byte each (packBest)
	buf    slotBuf
	cnt    Counter
}

func newPrefix(h sketch.Header, blen int) *prefix {
	k := int(h.K)
	s := &prefix{h: h, key: rng.Key(h.Seed, uint64(sketch.Prefix)), gkeys: make([]uint64, (k+7)/8),
		packed: make([]uint64, (k+7)/8),
		buf:    newSlotBuf(k, blen, rng.Key(h.Seed, uint64(sketch.Prefix), 1), false)}
	for g := range s.gkeys {
		s.gkeys[g] = rng.Key(h.Seed, uint64(sketch.Prefix), 2, uint64(g))
	}
	return s
}

// packBest packs the best prefixes of slots base … base+7 into the bytes of
// a word, low byte first, an empty slot (noKey) as 255 (every prefix is ≤
// both), slots past k as 0.
func packBest(best []uint32, base int) uint64 {
	var x uint64
	for j := 7; j >= 0; j-- {
		x <<= 8
		if base+j < len(best) {
			x |= uint64(min(best[base+j], 255))
		}
	}
	return x
}

// anyByteLE reports whether some byte of w is ≤ the same byte of b: each
// pair is compared in a 16-bit lane as 256 + b_j − w_j, whose bit 8 is set
// iff b_j ≥ w_j (the lanes never borrow from each other).
func anyByteLE(w, b uint64) bool {
	const m, h = 0x00FF00FF00FF00FF, 0x0100010001000100
	even := (b&m | h) - w&m
	odd := (b>>8&m | h) - w>>8&m
	return (even|odd)&h != 0
}

func (s *prefix) Header() sketch.Header { return s.h }
func (s *prefix) Clone() Sampler        { return newPrefix(s.h, s.buf.blen) }
func (s *prefix) Counter() Counter      { return s.cnt }
func (s *prefix) ResetCounter()         { s.cnt = Counter{} }

func (s *prefix) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	if len(fs) == 0 {
		return dst
	}
	k := int(s.h.K)
	b := &s.buf
	b.reset(k)
	b.bits = 0
	best := b.best[:k]
	pb := s.packed
	for g := range pb {
		pb[g] = packBest(best, 8*g)
	}
	for _, f := range fs {
		y := rng.Mix64(f.ID ^ s.key)
		for g, gk := range s.gkeys {
			w := rng.Mix64(y ^ gk)
			if !anyByteLE(w, pb[g]) {
				continue // no prefix ties or beats its slot's best
			}
			base := 8 * g
			for j := 0; j < 8 && base+j < k; j, w = j+1, w>>8 {
				if p := uint32(w & 0xff); p <= best[base+j] {
					b.offer(base+j, p, f.ID)
				}
			}
			pb[g] = packBest(best, base)
		}
	}
	dst, v := grow(dst, k)
	for i := range v {
		b.resolve(i)
		v[i] = uint64(best[i])<<56 | b.tail(b.ids[i*b.blen], i)>>8
	}
	s.cnt.Inputs += uint64(len(fs))
	s.cnt.Samples += uint64(len(fs)) * uint64(k)
	s.cnt.Bits += 8*uint64(len(fs))*uint64(k) + b.bits
	return dst
}
