package feature

import (
	"encoding/binary"

	"github.com/neardup/neardup/rabin"
)

// tokHasher computes exactly rabin.Table.Hash for short strings (tokens),
// faster. Table.Hash folds whole 8-byte blocks with eight independent
// lookups but takes a string's last len%8 bytes one at a time, a chain of
// dependent lookups; most tokens are shorter than 8 bytes, so that chain is
// the whole cost. Multiplying by x^(8n) is linear, so the n tail bytes can
// be folded at once like a full block: byte i of the n goes through table
// [n-1-i] of the byte tables (entry [b][v] = v·x^(8b+8) mod p, book 3.3),
// the bytes above shift down by n, and the n lookups are independent.
//
// The tables are derived from the rabin.Table through its public API (by
// linearity, Extend(0, v at byte i of 8) is entry [7-i][v]), and a test
// checks hash against Table.Hash for every length up to 40. A tokHasher is
// immutable after newTokHasher and safe for concurrent use; a nil
// *tokHasher hashes everything to 0 (for callers that need no ids).
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

// hash returns rabin.Table.Hash(data) for the table h was made from.
func (h *tokHasher) hash(data []byte) uint64 {
	if h == nil {
		return 0
	}
	f := h.q
	for len(data) >= 8 {
		f ^= binary.LittleEndian.Uint64(data)
		f = h.by[7][byte(f)] ^ h.by[6][byte(f>>8)] ^
			h.by[5][byte(f>>16)] ^ h.by[4][byte(f>>24)] ^
			h.by[3][byte(f>>32)] ^ h.by[2][byte(f>>40)] ^
			h.by[1][byte(f>>48)] ^ h.by[0][byte(f>>56)]
		data = data[8:]
	}
	switch len(data) {
	case 0:
		return f
	case 1:
		f ^= uint64(data[0])
		return f>>8 ^ h.by[0][byte(f)]
	case 2:
		f ^= uint64(binary.LittleEndian.Uint16(data))
		return f>>16 ^ h.by[1][byte(f)] ^ h.by[0][byte(f>>8)]
	case 3:
		f ^= uint64(binary.LittleEndian.Uint16(data)) | uint64(data[2])<<16
		return f>>24 ^ h.by[2][byte(f)] ^ h.by[1][byte(f>>8)] ^ h.by[0][byte(f>>16)]
	case 4:
		f ^= uint64(binary.LittleEndian.Uint32(data))
		return f>>32 ^ h.by[3][byte(f)] ^ h.by[2][byte(f>>8)] ^ h.by[1][byte(f>>16)] ^ h.by[0][byte(f>>24)]
	case 5:
		f ^= uint64(binary.LittleEndian.Uint32(data)) | uint64(data[4])<<32
		return f>>40 ^ h.by[4][byte(f)] ^ h.by[3][byte(f>>8)] ^ h.by[2][byte(f>>16)] ^
			h.by[1][byte(f>>24)] ^ h.by[0][byte(f>>32)]
	case 6:
		f ^= uint64(binary.LittleEndian.Uint32(data)) | uint64(binary.LittleEndian.Uint16(data[4:]))<<32
		return f>>48 ^ h.by[5][byte(f)] ^ h.by[4][byte(f>>8)] ^ h.by[3][byte(f>>16)] ^
			h.by[2][byte(f>>24)] ^ h.by[1][byte(f>>32)] ^ h.by[0][byte(f>>40)]
	default: // 7
		f ^= uint64(binary.LittleEndian.Uint32(data)) | uint64(binary.LittleEndian.Uint16(data[4:]))<<32 |
			uint64(data[6])<<48
		return f>>56 ^ h.by[6][byte(f)] ^ h.by[5][byte(f>>8)] ^ h.by[4][byte(f>>16)] ^
			h.by[3][byte(f>>24)] ^ h.by[2][byte(f>>32)] ^ h.by[1][byte(f>>40)] ^ h.by[0][byte(f>>48)]
	}
}
