// Package rabin provides Rabin fingerprints over GF(2^64): random primitive
// polynomials, table-driven hashing of byte strings and 64-bit words,
// concatenation of fingerprints, and sliding windows over words and bytes.
//
// A Rabin fingerprint (Manasse, "On the Efficient Determination of Most Near
// Neighbors" (the book) 2.2 and 3.3, after M. O. Rabin, "Fingerprinting by
// random polynomials", 1981) reads a string as a polynomial over GF(2),
// prepends a leading 1 (so runs of leading zeros count), appends 64 zero
// bits, and takes the residue modulo a primitive polynomial p of degree 64:
// Hash(s) = (x^|s| + s(x))·x^64 mod p, with |s| in bits. Because this is
// linear algebra in the field GF(2)[x]/(p) = GF(2^64), fingerprints compose:
// the fingerprint of a‖b follows from those of a and b and the length of b
// (Concat), and a window of fixed span slides by one unit in constant time
// (WordWindow, ByteWindow), which is how k-word shingles and content-defined
// chunk boundaries are fingerprinted cheaply. Distinct strings of at most 7
// bytes never collide (a degree < 64 polynomial is its own residue and
// multiplying by x^64 is a bijection of the field). Two fixed distinct
// strings of at most n bits collide only if p divides their difference, a
// polynomial of degree at most n with at most n/64 irreducible factors of
// degree 64; there are about 2^57 primitive polynomials of degree 64, so for
// a randomly drawn p (RandomPrimitive) the collision probability is at most
// n/2^63 (Rabin's bound).
//
// Conventions follow book 3.3 exactly. Field elements (fingerprints and Poly
// values) are stored reflected: bit i of the uint64 holds the coefficient of
// x^(63-i). A byte string is read as a little-endian stream: byte 0 carries
// the highest degrees and, within a byte, the 1's bit comes first (highest
// degree). So the 8-byte little-endian encoding of a word w is the same bit
// string as w itself, HashUint64(w) equals Hash of those 8 bytes, and eight
// tables of 256 entries fold eight bytes per step. (The degree-8 worked
// example of book 2.2 writes bytes most-significant bit first; the tests
// reproduce it with a reference implementation in that order and pin the
// difference, see reference_test.go.)
//
// This is not a cryptographic hash: fingerprints are linear,
// Hash(a xor b) = Hash(a) xor Hash(b) xor Hash(0^|a|) for equal lengths, so
// anyone who knows p can build collisions, and algebraically related inputs
// give related outputs (book 2.2 warnings). Do not fingerprint fingerprints
// with the same polynomial: use a second polynomial (another seed) for the
// outer level. It is not a general-purpose keyed hash either: for sampling,
// mix fingerprints through internal/rng.
package rabin

import (
	"encoding/binary"
	"fmt"
)

// Table holds the precomputed tables for one polynomial: eight 256-entry
// byte tables (book 3.3's bybyte: entry [b][n] is n·x^(8b+8) mod p, n read
// in the low byte) and the powers x^(8·2^i) mod p used by Concat.
//
// A Table is about 32.5 KiB, costs about twenty microseconds to build, is immutable
// after New and safe for concurrent use by any number of goroutines. The
// zero value is not usable: build tables with New.
type Table struct {
	by  [8][256]uint64
	by2 [8][256]uint64 // by2[b][n] = by[b][n]·x^64 mod p: mul128's tables
	pow [63]uint64     // pow[i] = x^(8·2^i) mod p
	q   uint64
	cl  *clFold // Extend's carry-less route, or nil (clmul.go)
}

// New returns the tables for p. It does not check p: fingerprints keep their
// guarantees only if p is irreducible (IsPrimitive or IsIrreducible), which
// RandomPrimitive and DefaultPoly ensure.
func New(p Poly) *Table {
	t := &Table{q: uint64(p)}
	// Book 3.3 InitByByte: the single-bit entries walk the powers of x from
	// x^64 = q (entry [0][0x80], the x^56 bit shifted by 8) upwards; the
	// other entries follow by linearity.
	f := t.q
	for b := range t.by {
		for i := 0x80; i != 0; i >>= 1 {
			t.by[b][i] = f
			f = mulX(f, t.q)
		}
		for i := 2; i < 256; i <<= 1 {
			for j := 1; j < i; j++ {
				t.by[b][i|j] = t.by[b][i] ^ t.by[b][j]
			}
		}
	}
	for b := range t.by2 {
		for n := range t.by2[b] {
			t.by2[b][n] = t.mul64(t.by[b][n])
		}
	}
	t.pow[0] = uint64(1) << 55 // x^8
	for i := 1; i < len(t.pow); i++ {
		t.pow[i] = t.mul(t.pow[i-1], t.pow[i-1])
	}
	if hasCLMUL {
		t.cl = newCLFold(t)
	}
	return t
}

// Poly returns the polynomial the table was built for.
func (t *Table) Poly() Poly { return Poly(t.q) }

// Hash returns the fingerprint of data: (x^(8·len) + data(x))·x^64 mod p in
// the reflected order of the package comment. Hash(nil) is uint64(p), the
// fingerprint of the empty string. Cost: one 8-table step (eight
// independent lookups) per 8 bytes or fewer, no allocation.
func (t *Table) Hash(data []byte) uint64 {
	return t.Extend(t.q, data)
}

// Hash2 returns t1.Hash(data), t2.Hash(data): two fingerprints of one
// body under two polynomials. On the carry-less route (amd64 with AVX) it
// reads data once for both, folding each 64-byte block into the two
// tables' lanes side by side, which costs about 40% more than one Hash
// rather than twice as much; elsewhere (the table route: the purego build
// tag, arm64, short inputs) it reads data once too, stepping four table
// chains at once (hash2Tables). Allocates nothing.
func Hash2(t1, t2 *Table, data []byte) (uint64, uint64) {
	if !hasCL2 || len(data) < clMin || t1.cl == nil || t2.cl == nil {
		if len(data) < clMin || t1.cl == nil && t2.cl == nil {
			return hash2Tables(t1, t2, data)
		}
		return t1.Hash(data), t2.Hash(data)
	}
	f1, f2 := t1.q, t2.q
	if n := len(data) &^ 255; hasCL2x && n > 0 {
		f1, f2 = extendCL2x(f1, f2, data[:n], t1.cl, t2.cl)
		data = data[n:]
	}
	if n := len(data) &^ 63; n > 0 {
		f1, f2 = extendCL2(f1, f2, data[:n], t1.cl, t2.cl)
		data = data[n:]
	}
	return t1.Extend(f1, data), t2.Extend(f2, data)
}

// Extend returns Hash(a‖data) given fp = Hash(a), so a long string can be
// fingerprinted in pieces. Cost and allocation as Hash: the last len%8
// bytes take one more 8-table step, not one dependent lookup each.
func (t *Table) Extend(fp uint64, data []byte) uint64 {
	f := fp
	all := data
	if len(data) >= clMin && t.cl != nil {
		n := len(data) &^ 63
		f, data = extendCL(f, data[:n], t.cl), data[n:]
	}
	if len(data) >= twoLanes {
		f, data = t.extendPairs(f, data)
	}
	return t.extendTail(f, data, all)
}

// hash2Tables is Hash2 by the tables alone: t1.Hash(data), t2.Hash(data)
// from one pass over data, the even and odd words of each polynomial's
// extendPairs stepping side by side (four independent chains).
func hash2Tables(t1, t2 *Table, data []byte) (uint64, uint64) {
	f1, f2 := t1.q, t2.q
	all := data
	if len(data) >= twoLanes {
		f1, f2, data = extendPairs2(t1, t2, f1, f2, data)
	}
	return t1.extendTail(f1, data, all), t2.extendTail(f2, data, all)
}

// extendPairs2 is t1.extendPairs(f1, data), t2.extendPairs(f2, data) in
// one loop over data (a function of its own, so that the compiler keeps
// its variables in registers).
//
//go:noinline
func extendPairs2(t1, t2 *Table, f1, f2 uint64, data []byte) (uint64, uint64, []byte) {
	m := len(data) / 16
	a1, b1, a2, b2 := f1, uint64(0), f2, uint64(0)
	for range m - 1 {
		w0, w1 := binary.LittleEndian.Uint64(data), binary.LittleEndian.Uint64(data[8:])
		a1 = t1.mul128(a1 ^ w0)
		a2 = t2.mul128(a2 ^ w0)
		b1 = t1.mul128(b1 ^ w1)
		b2 = t2.mul128(b2 ^ w1)
		data = data[16:]
	}
	w0, w1 := binary.LittleEndian.Uint64(data), binary.LittleEndian.Uint64(data[8:])
	a1 = t1.mul128(a1 ^ w0)
	a2 = t2.mul128(a2 ^ w0)
	b1 = t1.mul64(b1 ^ w1)
	b2 = t2.mul64(b2 ^ w1)
	return a1 ^ b1, a2 ^ b2, data[16:]
}

// extendTail is Extend's end: the words of data after its carry-less and
// two-chain routes, and the last len%8 bytes (all is the whole input,
// whose last 8 bytes hold them when it is that long).
func (t *Table) extendTail(f uint64, data, all []byte) uint64 {
	for len(data) >= 8 {
		f = t.mul64(f ^ binary.LittleEndian.Uint64(data))
		data = data[8:]
	}
	r := uint(len(data))
	if r == 0 {
		return f
	}
	// The r tail bytes, as the low bytes of a word.
	var v uint64
	if len(all) >= 8 {
		v = binary.LittleEndian.Uint64(all[len(all)-8:]) >> (64 - 8*r)
	} else if r >= 4 { // two overlapping 4-byte loads (equal bytes or'ed)
		v = uint64(binary.LittleEndian.Uint32(data)) |
			uint64(binary.LittleEndian.Uint32(data[r-4:]))<<(8*(r-4))
	} else { // 1 to 3 bytes: first, middle, last
		v = uint64(data[0]) | uint64(data[r/2])<<(8*(r/2)) | uint64(data[r-1])<<(8*(r-1))
	}
	// (f + v)·x^(8r): in the reflected order, multiplying by x^(8r)
	// shifts the word down by r bytes, except for its r low bytes, which
	// pass x^63; moved to the top of a word, those are reduced by the same
	// eight tables as a full step (the zero bytes below them add nothing).
	g := f ^ v
	return (g >> (8 * r)) ^ t.mul64(g<<(64-8*r))
}

// HashUint64 returns the fingerprint of one 64-bit word unit x, which is by
// construction the fingerprint of its 8-byte little-endian encoding:
// HashUint64(x) == Hash(binary.LittleEndian.AppendUint64(nil, x)). Cost:
// eight table lookups.
func (t *Table) HashUint64(x uint64) uint64 {
	return t.mul64(t.q ^ x)
}

// ExtendUint64 returns Hash(a‖le(x)) given fp = Hash(a), where le(x) is the
// 8-byte little-endian encoding of x (book 3.3's Extend over ulong units).
// Cost: eight table lookups.
func (t *Table) ExtendUint64(fp, x uint64) uint64 {
	return t.mul64(fp ^ x)
}

// Concat returns Hash(a‖b) given fa = Hash(a), fb = Hash(b) and lenB, the
// length of b in bytes (book 3.3): Hash(a‖b) = (fa - p)·x^(8·lenB) + fb,
// where subtracting p (that is, Hash of the empty string) removes the
// leading 1 of a that the leading 1 of b replaces. The power of x is applied
// by table lookups for the low bits of lenB and by one field multiplication
// per remaining set bit (square-and-multiply over precomputed x^(8·2^i)), so
// the cost is O(log lenB): tens of nanoseconds to about a microsecond. It
// panics if lenB is negative.
func (t *Table) Concat(fa, fb uint64, lenB int) uint64 {
	if lenB < 0 {
		panic(fmt.Sprintf("rabin: Concat with negative length %d", lenB))
	}
	return t.shiftBytes(fa^t.q, uint64(lenB)) ^ fb
}

// twoLanes is the length from which Extend runs two chains at once.
const twoLanes = 64

// extendPairs is Extend over the longest prefix of data made of an even
// number m of 8-byte words, returning the state after it and the rest of
// data. Extend's one chain waits for each step's lookups before the next;
// here the even and the odd words make two independent chains, each
// stepping over two words at once (mul128): with w_i the words and f the
// state before them, the state after them is
//
//	f·x^(128m) xor sum_i w_i·x^(64(2m-i))
//
// and the even chain A_(j+1) = (A_j xor w_2j)·x^128 from A_0 = f yields f's
// term and the even words', the odd chain B_(j+1) = (B_j xor w_(2j+1))·x^128
// from B_0 = 0, its last step by x^64 instead, the odd words'.
func (t *Table) extendPairs(f uint64, data []byte) (uint64, []byte) {
	m := len(data) / 16
	a, b := f, uint64(0)
	for range m - 1 {
		a = t.mul128(a ^ binary.LittleEndian.Uint64(data))
		b = t.mul128(b ^ binary.LittleEndian.Uint64(data[8:]))
		data = data[16:]
	}
	a = t.mul128(a ^ binary.LittleEndian.Uint64(data))
	b = t.mul64(b ^ binary.LittleEndian.Uint64(data[8:]))
	return a ^ b, data[16:]
}

// mul128 returns f·x^128 mod p: eight lookups, as mul64.
func (t *Table) mul128(f uint64) uint64 {
	return ((t.by2[7][byte(f)] ^ t.by2[6][byte(f>>8)]) ^
		(t.by2[5][byte(f>>16)] ^ t.by2[4][byte(f>>24)])) ^
		((t.by2[3][byte(f>>32)] ^ t.by2[2][byte(f>>40)]) ^
			(t.by2[1][byte(f>>48)] ^ t.by2[0][byte(f>>56)]))
}

// mul64 returns f·x^64 mod p: eight lookups, one per byte of f.
func (t *Table) mul64(f uint64) uint64 {
	// Parenthesized as a tree: Go does not reassociate, and a balanced
	// xor tree shortens the dependency chain after the loads.
	return ((t.by[7][byte(f)] ^ t.by[6][byte(f>>8)]) ^
		(t.by[5][byte(f>>16)] ^ t.by[4][byte(f>>24)])) ^
		((t.by[3][byte(f>>32)] ^ t.by[2][byte(f>>40)]) ^
			(t.by[1][byte(f>>48)] ^ t.by[0][byte(f>>56)]))
}

// shiftBytes returns v·x^(8n) mod p.
func (t *Table) shiftBytes(v, n uint64) uint64 {
	// Low three bits of n: shift by k < 8 bytes within the word; the k
	// bytes that overflow past x^63 are reduced by the byte tables.
	if k := n & 7; k != 0 {
		r := v >> (8 * k)
		for j := uint64(0); j < k; j++ {
			r ^= t.by[k-1-j][byte(v>>(8*j))]
		}
		v = r
	}
	n >>= 3
	if n <= 16 { // up to 16 words by lookups: cheaper than one multiplication
		for ; n > 0; n-- {
			v = t.mul64(v)
		}
		return v
	}
	for i := 3; n != 0; i, n = i+1, n>>1 {
		if n&1 != 0 {
			v = t.mul(v, t.pow[i])
		}
	}
	return v
}

// mul returns a·b mod p in reflected order, four bits of b per step: the
// 16 multiples of a by polynomials of degree < 4, and Horner's rule from the
// highest-degree nibble of b (its low bits) down, multiplying the
// accumulator by x^4 with one reduction lookup (by[0][n<<4] = n·x^4 for n in
// the top four degrees).
func (t *Table) mul(a, b uint64) uint64 {
	var m [16]uint64
	m[8] = a // nibble bit i stands for x^(3-i)
	m[4] = mulX(a, t.q)
	m[2] = mulX(m[4], t.q)
	m[1] = mulX(m[2], t.q)
	for i := 2; i < 16; i <<= 1 {
		for j := 1; j < i; j++ {
			m[i|j] = m[i] ^ m[j]
		}
	}
	var r uint64
	for s := 0; s < 64; s += 4 {
		r = ((r >> 4) ^ m[(b>>uint(s))&15]) ^ t.by[0][byte(r<<4)]
	}
	return r
}
