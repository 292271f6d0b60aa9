package feature

import (
	"encoding/binary"

	"github.com/neardup/neardup/rabin"
)

// tokHasher computes exactly rabin.Table.Hash for short strings (tokens),
// faster and without branches on the length. Table.Hash folds whole 8-byte
// blocks with eight independent lookups (fold: g·x^64 mod p); the last
// r = len%8 bytes need g·x^(8r) mod p for g = f xor those bytes. In the
// reflected order of package rabin, multiplying by x^(8r) shifts g down by r
// bytes (g >> 8r) except for its r lowest bytes, which overflow past x^63;
// those bytes, moved to the top of a word (g << (64-8r)), are reduced by
// exactly the tables a full fold uses, the zero bytes below them adding
// nothing (every table maps 0 to 0). So the tail is
// (g >> 8r) xor fold(g << (64-8r)), eight independent lookups for any r,
// and r = 0 gives g itself (Go shifts by 64 give 0).
//
// The tables are derived from the rabin.Table through its public API (by
// linearity, Extend(0, v at byte i of 8) is entry [7-i][v], book 3.3's
// bybyte), and a test checks hash against Table.Hash for every length up to
// 40. A tokHasher is immutable after newTokHasher and safe for concurrent
// use. The zero value hashes every string to 0, for callers that need no
// ids (zeroHasher).
type tokHasher struct {
	by [8][256]uint64
	q  uint64
}

// zeroHasher stands in when fingerprints are not needed.
var zeroHasher tokHasher

func newTokHasher(t *rabin.Table) *tokHasher {
	h := &tokHasher{q: uint64(t.Poly())}
	var buf [8]byte
	for i := 0; i < 8; i++ {
		for v := 0; v < 256; v++ {
			buf = [8]byte{}
			buf[i] = byte(v)
			h.by[7-i][v] = t.Extend(0, buf[:])
		}
	}
	return h
}

// fold returns g·x^64 mod p: eight independent lookups.
func (h *tokHasher) fold(g uint64) uint64 {
	return ((h.by[7][byte(g)] ^ h.by[6][byte(g>>8)]) ^ (h.by[5][byte(g>>16)] ^ h.by[4][byte(g>>24)])) ^
		((h.by[3][byte(g>>32)] ^ h.by[2][byte(g>>40)]) ^ (h.by[1][byte(g>>48)] ^ h.by[0][byte(g>>56)]))
}

// hash returns rabin.Table.Hash(data) for the table h was made from.
func (h *tokHasher) hash(data []byte) uint64 {
	f := h.q
	all := data
	for len(data) >= 8 {
		f = h.fold(f ^ binary.LittleEndian.Uint64(data))
		data = data[8:]
	}
	r := uint(len(data))
	if r == 0 {
		return f
	}
	var v uint64
	if len(all) >= 8 {
		// The last 8 bytes, shifted so that only the r tail bytes remain.
		v = binary.LittleEndian.Uint64(all[len(all)-8:]) >> (64 - 8*r)
	} else {
		for i, c := range data {
			v |= uint64(c) << (8 * uint(i))
		}
	}
	g := f ^ v
	return (g >> (8 * r)) ^ h.fold(g<<(64-8*r))
}

// winHasher is the word window of package rabin (book 3.3's Slide over
// 64-bit units, rabin.WordWindow) reduced to two table folds that the
// extractor's loop inlines: the fingerprint of the window s‖in after
// dropping unit out from a full window out‖s of K units is
//
//	dropOf(out) xor step(fp xor in)
//
// where step(fp xor in) = (fp xor in)·x^64 mod p is rabin.Table.ExtendUint64(fp, in)
// and dropOf(out) is the affine contribution of removing out together with
// the leading-1 bookkeeping (rabin.WordWindow.Slide(0, out, 0); its
// constant is folded into table 0, which every drop reads exactly once).
// dropOf does not depend on fp, so only step's eight lookups are on the
// dependency chain from one shingle to the next.
//
// The tables come from rabin's public API (ExtendUint64 and Slide are
// linear in their unit arguments), and tests check the extractor's ids
// against rabin.WordWindow. Immutable after newWinHasher, safe for
// concurrent use; 32 KiB.
type winHasher struct {
	by   [8][256]uint64 // by[7-i][v] = ExtendUint64(0, v<<8i)
	drop [8][256]uint64 // drop[7-i][v] = Slide(0, v<<8i, 0) xor c, plus c in drop[0]
	q    uint64
}

func newWinHasher(t *rabin.Table, w *rabin.WordWindow) *winHasher {
	h := &winHasher{q: uint64(t.Poly())}
	c := w.Slide(0, 0, 0)
	for i := 0; i < 8; i++ {
		for v := 0; v < 256; v++ {
			u := uint64(v) << (8 * uint(i))
			h.by[7-i][v] = t.ExtendUint64(0, u)
			h.drop[7-i][v] = w.Slide(0, u, 0) ^ c
		}
	}
	for v := range h.drop[0] {
		h.drop[0][v] ^= c
	}
	return h
}

// step returns g·x^64 mod p: rabin.Table.ExtendUint64(fp, in) for
// g = fp xor in.
func (h *winHasher) step(g uint64) uint64 {
	return ((h.by[7][byte(g)] ^ h.by[6][byte(g>>8)]) ^ (h.by[5][byte(g>>16)] ^ h.by[4][byte(g>>24)])) ^
		((h.by[3][byte(g>>32)] ^ h.by[2][byte(g>>40)]) ^ (h.by[1][byte(g>>48)] ^ h.by[0][byte(g>>56)]))
}

// dropOf returns the contribution of dropping unit u from a full window:
// rabin.WordWindow.Slide(fp, u, in) == dropOf(u) ^ step(fp^in).
func (h *winHasher) dropOf(u uint64) uint64 {
	return ((h.drop[7][byte(u)] ^ h.drop[6][byte(u>>8)]) ^ (h.drop[5][byte(u>>16)] ^ h.drop[4][byte(u>>24)])) ^
		((h.drop[3][byte(u>>32)] ^ h.drop[2][byte(u>>40)]) ^ (h.drop[1][byte(u>>48)] ^ h.drop[0][byte(u>>56)]))
}

// hash3 returns hash of the three bytes of v (little-endian, the first
// byte lowest): the tail fold of hash for r = 3, of which only the three
// lookups of the nonzero top bytes of g << 40 remain (the others read
// entry 0, which is 0).
func (h *tokHasher) hash3(v uint64) uint64 {
	g := h.q ^ v
	return g>>24 ^ h.by[2][byte(g)] ^ h.by[1][byte(g>>8)] ^ h.by[0][byte(g>>16)]
}
