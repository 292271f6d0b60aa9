package rabin

// A reference implementation, deliberately unlike the package code: plain
// bit-by-bit polynomial arithmetic in conventional order (bit i holds the
// coefficient of x^i), for any modulus degree d <= 64, with no tables and no
// reflection. The package's table-driven, reflected code is checked against
// it, and it is itself checked against brute force and against the book's
// worked example.

import (
	"math/bits"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// gf2 is a polynomial over GF(2) of degree < 128, conventional order.
type gf2 struct{ hi, lo uint64 }

func (a gf2) deg() int { // -1 for the zero polynomial
	if a.hi != 0 {
		return 127 - bits.LeadingZeros64(a.hi)
	}
	return 63 - bits.LeadingZeros64(a.lo)
}

func (a gf2) xor(b gf2) gf2 { return gf2{a.hi ^ b.hi, a.lo ^ b.lo} }

func (a gf2) isZero() bool { return a.hi == 0 && a.lo == 0 }

func (a gf2) bit(i int) uint64 {
	if i >= 64 {
		return a.hi >> uint(i-64) & 1
	}
	return a.lo >> uint(i) & 1
}

func (a gf2) shl(k int) gf2 {
	switch {
	case k == 0:
		return a
	case k >= 64:
		return gf2{a.lo << uint(k-64), 0}
	default:
		return gf2{a.hi<<uint(k) | a.lo>>uint(64-k), a.lo << uint(k)}
	}
}

// mod returns a mod p by long division, one leading term at a time.
func (a gf2) mod(p gf2) gf2 {
	dp := p.deg()
	for d := a.deg(); d >= dp; d = a.deg() {
		a = a.xor(p.shl(d - dp))
	}
	return a
}

// refMulX returns r·x mod p for deg r < deg p.
func refMulX(r, p gf2) gf2 {
	r = r.shl(1)
	if r.bit(p.deg()) != 0 {
		r = r.xor(p)
	}
	return r
}

// refMul returns a·b mod p by shift-and-add, b's highest degree first.
func refMul(a, b, p gf2) gf2 {
	var r gf2
	for i := b.deg(); i >= 0; i-- {
		r = refMulX(r, p)
		if b.bit(i) != 0 {
			r = r.xor(a)
		}
	}
	return r
}

// refPowX returns x^e mod p.
func refPowX(e uint64, p gf2) gf2 {
	r := gf2{0, 1}.mod(p)
	for i := 63; i >= 0; i-- {
		r = refMul(r, r, p)
		if e>>uint(i)&1 != 0 {
			r = refMulX(r, p)
		}
	}
	return r
}

func refGCD(a, b gf2) gf2 {
	for !b.isZero() {
		a, b = b, a.mod(b)
	}
	return a
}

// refIrreducible is Ben-Or's test, a different algorithm from the package's
// Rabin test: p of degree d is irreducible iff gcd(p, x^(2^i) - x) = 1 for
// every i = 1..d/2 (no factor of degree i divides p).
func refIrreducible(p gf2) bool {
	d := p.deg()
	xi := gf2{0, 2}.mod(p) // x
	for i := 1; i <= d/2; i++ {
		xi = refMul(xi, xi, p) // x^(2^i)
		if refGCD(p, xi.xor(gf2{0, 2})).deg() != 0 {
			return false
		}
	}
	return d >= 1
}

// refPrimitive reports whether x has order exactly 2^d - 1 modulo p, given
// the distinct prime factors of 2^d - 1.
func refPrimitive(p gf2, primes []uint64) bool {
	d := p.deg()
	if p.bit(0) == 0 { // x divides p: x is not invertible
		return false
	}
	n := ^uint64(0) >> uint(64-d) // 2^d - 1
	oneP := gf2{0, 1}.mod(p)
	if refPowX(n, p) != oneP {
		return false
	}
	for _, r := range primes {
		if refPowX(n/r, p) == oneP {
			return false
		}
	}
	return true
}

// primeFactorsTrial returns the distinct prime factors of n by trial
// division (n < 2^40 keeps this fast).
func primeFactorsTrial(n uint64) []uint64 {
	var fs []uint64
	for f := uint64(2); f*f <= n; f++ {
		if n%f == 0 {
			fs = append(fs, f)
			for n%f == 0 {
				n /= f
			}
		}
	}
	if n > 1 {
		fs = append(fs, n)
	}
	return fs
}

// msbFirst and lsbFirst expand bytes into bits (0 or 1), the first bit of
// the string first: the book 2.2 example writes a byte most significant bit
// first; book 3.3 code reads the 1's bit first.
func msbFirst(data []byte) []uint64 {
	var out []uint64
	for _, c := range data {
		for j := 7; j >= 0; j-- {
			out = append(out, uint64(c>>uint(j)&1))
		}
	}
	return out
}

func lsbFirst(data []byte) []uint64 {
	var out []uint64
	for _, c := range data {
		for j := 0; j < 8; j++ {
			out = append(out, uint64(c>>uint(j)&1))
		}
	}
	return out
}

// refHash is book 2.2's definition verbatim: prepend a leading 1, append
// deg p zeros, reduce modulo p.
func refHash(p gf2, bitsOf []uint64) gf2 {
	r := gf2{0, 1}.mod(p)
	for _, b := range bitsOf {
		r = refMulX(r, p)
		r.lo ^= b
	}
	for i := 0; i < p.deg(); i++ {
		r = refMulX(r, p)
	}
	return r
}

// conv converts a package Poly into the reference representation.
func conv(p Poly) gf2 { return gf2{1, bits.Reverse64(uint64(p))} }

// polyFromExps builds a degree-64 Poly from the exponents of its terms
// below x^64, e.g. polyFromExps(4, 3, 1, 0) = x^64 + x^4 + x^3 + x + 1.
func polyFromExps(exps ...int) Poly {
	var q uint64
	for _, e := range exps {
		q ^= uint64(1) << uint(63-e)
	}
	return Poly(q)
}

// TestBookDegree8Example reproduces book 2.2: with p = x^8+x^4+x^3+x^2+1,
// "A" (0x41, written most significant bit first) is x^16 + x^14 + x^8 with
// its leading 1 and 8 trailing zeros, and hashes to x^6 + x = 0x42.
func TestBookDegree8Example(t *testing.T) {
	p := gf2{0, 1<<8 | 1<<4 | 1<<3 | 1<<2 | 1}
	if got := refHash(p, msbFirst([]byte("A"))); got != (gf2{0, 0x42}) {
		t.Fatalf(`book 2.2: Hash("A") = %#x, want 0x42`, got.lo)
	}
	// The intermediate polynomial as the book writes it.
	a := gf2{0, 1<<16 | 1<<14 | 1<<8}
	if got := a.mod(p); got != (gf2{0, 0x42}) {
		t.Fatalf("x^16+x^14+x^8 mod p = %#x, want 0x42", got.lo)
	}
	// The book also states p is primitive; check by brute force.
	if ord := bruteOrder(8, p.lo); ord != 255 {
		t.Fatalf("order of x modulo x^8+x^4+x^3+x^2+1 = %d, want 255", ord)
	}
	// Book 3.3's byte order (1's bit first) applied to the same example
	// gives a different value, x^6 + x^4 (0x50; 0x0a in 3.3's reflected
	// storage). This pins the documented difference between the two
	// sections: the package follows 3.3.
	if got := refHash(p, lsbFirst([]byte("A"))); got != (gf2{0, 0x50}) {
		t.Fatalf(`3.3 order: Hash("A") = %#x, want 0x50`, got.lo)
	}
}

// TestTableMatchesReference checks Hash, Extend and HashUint64 against the
// bit-by-bit reference with 3.3's bit order, for several polynomials and
// every length up to 200 bytes (past twoLanes: Extend's two chains, with
// every split between Hash and Extend).
func TestTableMatchesReference(t *testing.T) {
	polys := []Poly{DefaultPoly, RandomPrimitive(1), polyFromExps(4, 3, 1, 0)}
	s := rng.New(11)
	for _, p := range polys {
		tab := New(p)
		P := conv(p)
		for n := 0; n <= 200; n++ {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(s.Uint64())
			}
			want := bits.Reverse64(refHash(P, lsbFirst(data)).lo)
			if got := tab.Hash(data); got != want {
				t.Fatalf("poly %#x len %d: Hash = %#x, reference %#x", uint64(p), n, got, want)
			}
			for cut := 0; cut <= n; cut++ {
				if got := tab.Extend(tab.Hash(data[:cut]), data[cut:]); got != want {
					t.Fatalf("poly %#x len %d cut %d: Extend = %#x, want %#x", uint64(p), n, cut, got, want)
				}
			}
		}
		x := s.Uint64()
		le := []byte{byte(x), byte(x >> 8), byte(x >> 16), byte(x >> 24), byte(x >> 32), byte(x >> 40), byte(x >> 48), byte(x >> 56)}
		want := bits.Reverse64(refHash(P, lsbFirst(le)).lo)
		if got := tab.HashUint64(x); got != want {
			t.Fatalf("HashUint64 = %#x, reference %#x", got, want)
		}
	}
}

// TestMulMatchesReference checks the table multiplication, the bit-serial
// multiplication and the powers against the reference.
func TestMulMatchesReference(t *testing.T) {
	s := rng.New(12)
	for _, p := range []Poly{DefaultPoly, RandomPrimitive(7)} {
		tab := New(p)
		P := conv(p)
		for i := 0; i < 300; i++ {
			a, b := s.Uint64(), s.Uint64()
			want := bits.Reverse64(refMul(gf2{0, bits.Reverse64(a)}, gf2{0, bits.Reverse64(b)}, P).lo)
			if got := tab.mul(a, b); got != want {
				t.Fatalf("mul(%#x, %#x) = %#x, want %#x", a, b, got, want)
			}
			if got := mulMod(a, b, uint64(p)); got != want {
				t.Fatalf("mulMod(%#x, %#x) = %#x, want %#x", a, b, got, want)
			}
		}
		for _, e := range []uint64{0, 1, 63, 64, 65, 1000, 1 << 40, ^uint64(0) / 3} {
			want := bits.Reverse64(refPowX(e, P).lo)
			if got := powX(e, uint64(p)); got != want {
				t.Fatalf("powX(%d) = %#x, want %#x", e, got, want)
			}
		}
		for i := range tab.pow {
			// x^(8·2^i); past i = 60 the exponent overflows, but in
			// GF(2^64) x^(2^64) = x, so x^(8·2^61) = x and x^(8·2^62) = x^2.
			var want uint64
			switch i {
			case 61:
				want = xPoly
			case 62:
				want = xPoly >> 1
			default:
				want = bits.Reverse64(refPowX(uint64(8)<<uint(i), P).lo)
			}
			if tab.pow[i] != want {
				t.Fatalf("pow[%d] = %#x, want %#x", i, tab.pow[i], want)
			}
		}
	}
}

// bruteOrder returns the order of x modulo the degree-d polynomial p
// (conventional, d <= 32) by walking its powers, or 0 if x never returns to
// 1 within 2^d steps (p(0) = 0).
func bruteOrder(d int, p uint64) uint64 {
	top := uint64(1) << uint(d)
	r := uint64(1)
	for k := uint64(1); k <= top; k++ {
		r <<= 1
		if r&top != 0 {
			r ^= p
		}
		if r == 1 {
			return k
		}
	}
	return 0
}

// bruteIrreducible tries every divisor of degree 1..d/2.
func bruteIrreducible(d int, p uint64) bool {
	for f := uint64(2); bits.Len64(f)-1 <= d/2; f++ {
		if (gf2{0, p}).mod(gf2{0, f}).isZero() {
			return false
		}
	}
	return true
}

func totient(n uint64) uint64 {
	r := n
	for _, f := range primeFactorsTrial(n) {
		r = r / f * (f - 1)
	}
	return r
}

// irreducibleCount is the number of monic irreducible polynomials of degree
// d over GF(2): (1/d)·Σ_{e|d} μ(d/e)·2^e.
func irreducibleCount(d int) uint64 {
	var s int64
	for e := 1; e <= d; e++ {
		if d%e != 0 {
			continue
		}
		s += int64(mobius(d/e)) << uint(e)
	}
	return uint64(s / int64(d))
}

func mobius(n int) int {
	m := 1
	for f := 2; f*f <= n; f++ {
		if n%f == 0 {
			n /= f
			if n%f == 0 {
				return 0
			}
			m = -m
		}
	}
	if n > 1 {
		m = -m
	}
	return m
}

// TestReferenceBruteForce validates the reference primitivity and
// irreducibility tests exhaustively for degrees 2..12 (against brute-force
// order and trial division, and against the exact counts φ(2^d-1)/d and the
// necklace formula), and on random polynomials of degrees 13..16.
func TestReferenceBruteForce(t *testing.T) {
	maxExhaustive := 12
	if testing.Short() {
		maxExhaustive = 10
	}
	for d := 2; d <= maxExhaustive; d++ {
		primes := primeFactorsTrial(uint64(1)<<uint(d) - 1)
		var nPrim, nIrr uint64
		for low := uint64(0); low < uint64(1)<<uint(d); low++ {
			p := uint64(1)<<uint(d) | low
			prim := bruteOrder(d, p) == uint64(1)<<uint(d)-1
			irr := bruteIrreducible(d, p)
			if got := refPrimitive(gf2{0, p}, primes); got != prim {
				t.Fatalf("degree %d p=%#x: refPrimitive %v, brute force %v", d, p, got, prim)
			}
			if got := refIrreducible(gf2{0, p}); got != irr {
				t.Fatalf("degree %d p=%#x: refIrreducible %v, brute force %v", d, p, got, irr)
			}
			if prim && !irr {
				t.Fatalf("degree %d p=%#x primitive but reducible", d, p)
			}
			if prim {
				nPrim++
			}
			if irr {
				nIrr++
			}
		}
		n := uint64(1)<<uint(d) - 1
		if want := totient(n) / uint64(d); nPrim != want {
			t.Errorf("degree %d: %d primitive polynomials, want φ(2^d-1)/d = %d", d, nPrim, want)
		}
		if want := irreducibleCount(d); nIrr != want {
			t.Errorf("degree %d: %d irreducible polynomials, want %d", d, nIrr, want)
		}
	}
	s := rng.New(13)
	for d := 13; d <= 16; d++ {
		primes := primeFactorsTrial(uint64(1)<<uint(d) - 1)
		for i := 0; i < 100; i++ {
			p := uint64(1)<<uint(d) | s.Uint64()&(uint64(1)<<uint(d)-1) | 1
			prim := bruteOrder(d, p) == uint64(1)<<uint(d)-1
			if got := refPrimitive(gf2{0, p}, primes); got != prim {
				t.Fatalf("degree %d p=%#x: refPrimitive %v, brute force %v", d, p, got, prim)
			}
			if got := refIrreducible(gf2{0, p}); got != bruteIrreducible(d, p) {
				t.Fatalf("degree %d p=%#x: refIrreducible %v, brute force disagrees", d, p, got)
			}
		}
	}
}
