package rabin

import (
	"fmt"
	"slices"
)

// WordWindow fingerprints a sliding window of the last n 64-bit units (book
// 3.3's Slide with word-sized units). Unit sequences are fingerprinted as
// the concatenation of the units' 8-byte little-endian encodings, so the
// fingerprint of units u1..uk equals Hash of their encodings, and of
// HashUint64 chained with ExtendUint64. The feature package slides it over
// word fingerprints to fingerprint k-word shingles in O(1) per shingle; make
// those word fingerprints with a different polynomial (another seed) than
// the window's, since fingerprinting fingerprints under one polynomial
// makes collisions far likelier (book 2.2, warning 1).
//
// Each Roll costs sixteen table lookups (eight to drop the oldest unit, eight
// to append the new one, independent of each other) and allocates nothing.
// A WordWindow holds its own 16 KiB span tables and an n-word ring; it is
// not safe for concurrent use, but any number of windows may share a Table.
// The zero value is not usable: use NewWordWindow.
type WordWindow struct {
	span [8][256]uint64 // span[b][v] = v·x^(8b+8)·x^(64n) mod p
	t    *Table
	c    uint64 // span lookup of q ^ 1: the leading-1 bookkeeping
	fp   uint64
	ring []uint64
	pos  int
	full bool
}

// NewWordWindow returns an empty window of span n units over t's
// polynomial. It panics if n < 1. Cost: 64 field multiplications and a
// 16 KiB table fill, a few microseconds.
func NewWordWindow(t *Table, n int) *WordWindow {
	if n < 1 {
		panic(fmt.Sprintf("rabin: window span %d < 1", n))
	}
	w := &WordWindow{t: t, ring: make([]uint64, n)}
	// Dropping the oldest unit d from Hash(d‖s), |s| = n-1 units, removes
	// (x^64 + d + 1)·x^(64(n-1))·x^64: the old leading 1, d, and adds the
	// new leading 1 in front of s (book 3.3). Folding the following append
	// (one more ·x^64) into the table gives factor x^(64n) below.
	xn := t.shiftBytes(one, 8*uint64(n)) // x^(64n)
	for b := range w.span {
		for i := 1; i < 256; i <<= 1 {
			w.span[b][i] = t.mul(t.by[b][i], xn)
		}
		for i := 2; i < 256; i <<= 1 {
			for j := 1; j < i; j++ {
				w.span[b][i|j] = w.span[b][i] ^ w.span[b][j]
			}
		}
	}
	w.c = w.spanOf(t.q ^ one)
	w.Reset()
	return w
}

func (w *WordWindow) spanOf(d uint64) uint64 {
	return ((w.span[7][byte(d)] ^ w.span[6][byte(d>>8)]) ^
		(w.span[5][byte(d>>16)] ^ w.span[4][byte(d>>24)])) ^
		((w.span[3][byte(d>>32)] ^ w.span[2][byte(d>>40)]) ^
			(w.span[1][byte(d>>48)] ^ w.span[0][byte(d>>56)]))
}

// Span returns n, the number of units in a full window.
func (w *WordWindow) Span() int { return len(w.ring) }

// Reset empties the window; the next Roll starts a new sequence.
func (w *WordWindow) Reset() {
	w.fp = w.t.q
	w.pos = 0
	w.full = false
	clear(w.ring)
}

// Roll appends the unit in and returns the fingerprint of the last n units,
// or of all units since the last Reset while there are fewer than n.
func (w *WordWindow) Roll(in uint64) uint64 {
	out := w.ring[w.pos]
	w.ring[w.pos] = in
	if w.pos++; w.pos == len(w.ring) {
		w.pos = 0
	}
	if w.full {
		w.fp = (w.spanOf(out) ^ w.c) ^ w.t.mul64(w.fp^in)
	} else {
		w.fp = w.t.mul64(w.fp ^ in)
		w.full = w.pos == 0
	}
	return w.fp
}

// Sum64 returns the fingerprint of the current window contents (Hash of the
// empty string after Reset).
func (w *WordWindow) Sum64() uint64 { return w.fp }

// Slide is the stateless form of Roll (book 3.3's Slide): given fp, the
// fingerprint of a full window out‖s of n units, it returns the fingerprint
// of s‖in. It does not touch the window's state.
func (w *WordWindow) Slide(fp, out, in uint64) uint64 {
	return (w.spanOf(out) ^ w.c) ^ w.t.mul64(fp^in)
}

// ByteWindow fingerprints a sliding window of the last n bytes, as used by
// content-defined chunking (a 48-byte window): the fingerprint of the window
// equals Hash of its bytes.
//
// Each Roll costs two table lookups (one to drop the oldest byte, one to
// append the new one) and allocates nothing; AppendRoll scans a whole
// buffer at about two thirds of that latency per byte. A ByteWindow holds
// 6 KiB of tables and a ring of n slots; it is not safe for concurrent use,
// but any number of windows may share a Table. The zero value is not
// usable: use NewByteWindow.
type ByteWindow struct {
	// out[d] = (x^8 + d + 1)·x^(8n)·x^64 mod p for a byte d; out[empty]
	// = 0 marks a ring slot not yet filled, so Roll needs no branch.
	out  [512]uint64
	out2 [256]uint64 // out2[d] = out[d]·x^8 mod p, for two-byte steps
	by0  *[256]uint64
	t    *Table
	fp   uint64
	ring []uint16 // bytes, or empty
	pos  int
}

// empty marks an unfilled ring slot of a ByteWindow.
const empty = 256

// NewByteWindow returns an empty window of span n bytes over t's
// polynomial. It panics if n < 1. Cost: nine field multiplications.
func NewByteWindow(t *Table, n int) *ByteWindow {
	if n < 1 {
		panic(fmt.Sprintf("rabin: window span %d < 1", n))
	}
	w := &ByteWindow{t: t, by0: &t.by[0], ring: make([]uint16, n)}
	// As for WordWindow, with 8-bit units: dropping byte d removes
	// (x^8 + d + 1)·x^(8(n-1))·x^64, and the next append multiplies by x^8.
	xn := t.shiftBytes(one, uint64(n)+8) // x^(8n+64)
	for i := 1; i < 256; i <<= 1 {
		w.out[i] = t.mul(uint64(i)<<56, xn) // byte bit j is x^(7-j): bit 56+j
	}
	for i := 2; i < 256; i <<= 1 {
		for j := 1; j < i; j++ {
			w.out[i|j] = w.out[i] ^ w.out[j]
		}
	}
	c := t.mul(uint64(1)<<55|one, xn) // (x^8 + 1)·x^(8n+64)
	for i := range 256 {
		w.out[i] ^= c
		w.out2[i] = (w.out[i] >> 8) ^ t.by[0][byte(w.out[i])]
	}
	w.Reset()
	return w
}

// Span returns n, the number of bytes in a full window.
func (w *ByteWindow) Span() int { return len(w.ring) }

// Reset empties the window; the next Roll starts a new sequence.
func (w *ByteWindow) Reset() {
	w.fp = w.t.q
	w.pos = 0
	for i := range w.ring {
		w.ring[i] = empty
	}
}

// Roll appends the byte in and returns the fingerprint of the last n bytes,
// or of all bytes since the last Reset while there are fewer than n.
func (w *ByteWindow) Roll(in byte) uint64 {
	p := w.pos
	out := w.ring[p] // a byte, or empty (out[empty] = 0)
	w.ring[p] = uint16(in)
	if p++; p == len(w.ring) {
		p = 0
	}
	w.pos = p
	fp := w.fp
	fp = ((fp >> 8) ^ w.out[out&511]) ^ w.by0[byte(fp)^in]
	w.fp = fp
	return fp
}

// Sum64 returns the fingerprint of the current window contents (Hash of the
// empty string after Reset).
func (w *ByteWindow) Sum64() uint64 { return w.fp }

// AppendRoll rolls every byte of data through the window, in order, and
// appends to dst the fingerprint after each byte: the same values as calling
// Roll on each byte, and it leaves the window in the same state. It is the
// fast path for scanning a buffer (winnowing needs every position's
// fingerprint): once the window is full it keeps the fingerprint in a
// register and advances two bytes per dependent step, so it costs about
// two thirds of the latency of Roll per byte. It allocates only if dst must
// grow.
func (w *ByteWindow) AppendRoll(dst []uint64, data []byte) []uint64 {
	dst = slices.Grow(dst, len(data))
	n := len(w.ring)
	// Until the ring has handed out its n old bytes (or while the window
	// fills), Roll does the bookkeeping.
	k := min(len(data), n)
	for _, c := range data[:k] {
		dst = append(dst, w.Roll(c))
	}
	if k == len(data) {
		return dst
	}
	// The window is now full and holds data[:n]: from here the byte that
	// leaves when rest[i] enters is old[i] = data[i].
	rest, old := data[n:], data[:len(data)-n]
	by0, by1 := w.by0, &w.t.by[1]
	out, out2 := (*[256]uint64)(w.out[:256]), &w.out2
	res := dst[len(dst) : len(dst)+len(rest)]
	fp := w.fp
	i := 0
	for ; i+2 <= len(rest) && i+2 <= len(old) && i+2 <= len(res); i += 2 {
		in0, in1, o0, o1 := rest[i], rest[i+1], old[i], old[i+1]
		// The odd position, off the dependency chain.
		res[i] = ((fp >> 8) ^ out[o0]) ^ by0[byte(fp)^in0]
		// Two bytes at once: fp·x^16 with both bytes appended, minus both
		// outgoing bytes (the first one shifted by one more byte). Only
		// the two lookups indexed by g are on the chain.
		g := fp ^ (uint64(in0) | uint64(in1)<<8)
		fp = ((g >> 16) ^ out2[o0] ^ out[o1]) ^ (by1[byte(g)] ^ by0[byte(g>>8)])
		res[i+1] = fp
	}
	for ; i < len(rest); i++ {
		fp = ((fp >> 8) ^ out[old[i]]) ^ by0[byte(fp)^rest[i]]
		res[i] = fp
	}
	dst = dst[:len(dst)+len(rest)]
	w.fp = fp
	// Leave the ring as len(rest) Rolls would have.
	m := len(rest)
	for j := max(0, m-n); j < m; j++ {
		w.ring[(w.pos+j)%n] = uint16(rest[j])
	}
	w.pos = (w.pos + m) % n
	return dst
}

// Slide is the stateless form of Roll for callers that keep the bytes
// themselves (a chunker scanning a buffer knows out = buf[i-n]): given fp,
// the fingerprint of a full window out‖s of n bytes, it returns the
// fingerprint of s‖in. It does not touch the window's state.
func (w *ByteWindow) Slide(fp uint64, out, in byte) uint64 {
	return ((fp >> 8) ^ w.out[out]) ^ w.by0[byte(fp)^in]
}
