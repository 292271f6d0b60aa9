package feature

import (
	"encoding/binary"

	"github.com/neardup/neardup/rabin"
)

// tokHasher computes the Rabin fingerprint of a token: rabin.Table.Hash of
// the token's bytes zero-padded to a multiple of 8 bytes. Tokens never
// contain a NUL byte (NUL is a delimiter), so the padding is unambiguous
// and distinct tokens stay distinct strings. The padding is for speed: most
// tokens are shorter than 8 bytes, and Table.Hash takes a string's last
// len%8 bytes one at a time (a chain of dependent lookups, and a
// length-dependent branch that mispredicts on every token), while a padded
// token is whole 8-byte blocks, each folded with eight independent lookups
// (book 3.3's byte tables) by one straight-line code path.
//
// The tables are derived from the rabin.Table through its public API (by
// linearity, Extend(0, v at byte i of 8) is table entry [7-i][v]), and a
// test checks hash against Table.Hash of the padded token for every length
// up to 40. A tokHasher is immutable after newTokHasher and safe for
// concurrent use; a nil *tokHasher hashes everything to 0 (for callers that
// need no ids).
type tokHasher struct {
	by [8][256]uint64
	q  uint64
}

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

// tailMask[n] keeps the low n bytes of a little-endian word.
var tailMask = [9]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff,
	0xffffffffffff, 0xffffffffffffff, 0xffffffffffffffff}

// hash returns rabin.Table.Hash(data ‖ 0^k), 0 <= k < 8 making the length
// a multiple of 8, for the table h was made from. When data has at least 8
// bytes of capacity past its last block it reads them (and masks them off)
// instead of copying.
func (h *tokHasher) hash(data []byte) uint64 {
	if h == nil {
		return 0
	}
	f := h.q
	for len(data) > 8 {
		f = h.fold(f ^ binary.LittleEndian.Uint64(data))
		data = data[8:]
	}
	if len(data) == 0 {
		return f
	}
	var v uint64
	if cap(data) >= 8 {
		v = binary.LittleEndian.Uint64(data[:8]) & tailMask[len(data)]
	} else {
		var b [8]byte
		copy(b[:], data)
		v = binary.LittleEndian.Uint64(b[:])
	}
	return h.fold(f ^ v)
}

// fold multiplies f by x^64 modulo the polynomial: one 8-byte step.
func (h *tokHasher) fold(f uint64) uint64 {
	return h.by[7][byte(f)] ^ h.by[6][byte(f>>8)] ^
		h.by[5][byte(f>>16)] ^ h.by[4][byte(f>>24)] ^
		h.by[3][byte(f>>32)] ^ h.by[2][byte(f>>40)] ^
		h.by[1][byte(f>>48)] ^ h.by[0][byte(f>>56)]
}
