package rabin

import "fmt"

// WordWindow fingerprints a sliding window of the last n 64-bit units (book
// 3.3's Slide with word-sized units). Unit sequences are fingerprinted as
// the concatenation of the units' 8-byte little-endian encodings, so the
// fingerprint of units u1..uk equals Hash of their encodings, and of
// HashUint64 chained with ExtendUint64. The feature package slides it over
// word fingerprints to fingerprint k-word shingles in O(1) per shingle.
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
// polynomial. It panics if n < 1. Cost: about 64 field multiplications.
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
	return w.span[7][byte(d)] ^ w.span[6][byte(d>>8)] ^
		w.span[5][byte(d>>16)] ^ w.span[4][byte(d>>24)] ^
		w.span[3][byte(d>>32)] ^ w.span[2][byte(d>>40)] ^
		w.span[1][byte(d>>48)] ^ w.span[0][byte(d>>56)]
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
		w.fp = w.t.mul64(w.fp^in) ^ w.spanOf(out) ^ w.c
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
	return w.t.mul64(fp^in) ^ w.spanOf(out) ^ w.c
}

// ByteWindow fingerprints a sliding window of the last n bytes, as used by
// content-defined chunking (a 48-byte window): the fingerprint of the window
// equals Hash of its bytes.
//
// Each Roll costs two table lookups (one to drop the oldest byte, one to
// append the new one) and allocates nothing. A ByteWindow holds a 2 KiB
// table and an n-byte ring; it is not safe for concurrent use, but any
// number of windows may share a Table. The zero value is not usable: use
// NewByteWindow.
type ByteWindow struct {
	out  [256]uint64 // out[d] = (x^8 + d + 1)·x^(8n)·x^64 mod p
	t    *Table
	fp   uint64
	ring []byte
	pos  int
	full bool
}

// NewByteWindow returns an empty window of span n bytes over t's
// polynomial. It panics if n < 1. Cost: nine field multiplications.
func NewByteWindow(t *Table, n int) *ByteWindow {
	if n < 1 {
		panic(fmt.Sprintf("rabin: window span %d < 1", n))
	}
	w := &ByteWindow{t: t, ring: make([]byte, n)}
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
	for i := range w.out {
		w.out[i] ^= c
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
	w.full = false
	clear(w.ring)
}

// Roll appends the byte in and returns the fingerprint of the last n bytes,
// or of all bytes since the last Reset while there are fewer than n.
func (w *ByteWindow) Roll(in byte) uint64 {
	out := w.ring[w.pos]
	w.ring[w.pos] = in
	if w.pos++; w.pos == len(w.ring) {
		w.pos = 0
	}
	if w.full {
		w.fp = (w.fp >> 8) ^ w.t.by[0][byte(w.fp)^in] ^ w.out[out]
	} else {
		w.fp = (w.fp >> 8) ^ w.t.by[0][byte(w.fp)^in]
		w.full = w.pos == 0
	}
	return w.fp
}

// Sum64 returns the fingerprint of the current window contents (Hash of the
// empty string after Reset).
func (w *ByteWindow) Sum64() uint64 { return w.fp }

// Slide is the stateless form of Roll for callers that keep the bytes
// themselves (a chunker scanning a buffer knows out = buf[i-n]): given fp,
// the fingerprint of a full window out‖s of n bytes, it returns the
// fingerprint of s‖in. It does not touch the window's state.
func (w *ByteWindow) Slide(fp uint64, out, in byte) uint64 {
	return (fp >> 8) ^ w.t.by[0][byte(fp)^in] ^ w.out[out]
}
