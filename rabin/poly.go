package rabin

import (
	"math/bits"
	"strconv"
	"strings"

	"github.com/neardup/neardup/internal/rng"
)

// Poly is a monic polynomial of degree 64 over GF(2), p = x^64 + q, stored
// as the 64 coefficients of q; the x^64 term is implicit.
//
// Bit order (book 3.3): bit i of the integer (bit 0 being the 1's bit) holds
// the coefficient of x^(63-i). So the constant term is the high bit
// 0x8000000000000000 and the x^63 term is the low bit 0x1. For example
// x^64 + x^4 + x^3 + x + 1 is Poly(0xd800000000000000). The same reflected
// order is used for every field element (fingerprint) in this package.
//
// A Poly is a plain value: its zero value is x^64, which is reducible and
// must not be used for fingerprints. Use RandomPrimitive or DefaultPoly.
type Poly uint64

// DefaultPoly is the primitive polynomial used when no seed is given. It is
// RandomPrimitive(0), pinned here as a constant (a test checks both that it
// equals RandomPrimitive(0) and that it is primitive). It is frozen: stored
// fingerprints depend on it.
const DefaultPoly Poly = 0xbb8fd845e4f25dff

// Reflected constants: the polynomials 1 and x as field elements.
const (
	one   = uint64(1) << 63 // x^0
	xPoly = uint64(1) << 62 // x^1
)

// rabinLabel keys the stream of RandomPrimitive ("rabin" in ASCII).
const rabinLabel = 0x7261_6269_6e

// primeFactors are the prime factors of 2^64 - 1 = 3·5·17·257·641·65537·6700417.
var primeFactors = [...]uint64{3, 5, 17, 257, 641, 65537, 6700417}

// String formats p as a polynomial in the usual notation, highest degree
// first, e.g. "x^64 + x^4 + x^3 + x + 1".
func (p Poly) String() string {
	var b strings.Builder
	b.WriteString("x^64")
	for d := 63; d >= 0; d-- {
		if uint64(p)>>(63-d)&1 == 0 {
			continue
		}
		switch d {
		case 0:
			b.WriteString(" + 1")
		case 1:
			b.WriteString(" + x")
		default:
			b.WriteString(" + x^")
			b.WriteString(strconv.Itoa(d))
		}
	}
	return b.String()
}

// mulX multiplies a by x modulo x^64 + q (reflected order: a right shift,
// reducing when the x^63 coefficient, the low bit, overflows into x^64).
func mulX(a, q uint64) uint64 {
	return (a >> 1) ^ (q & -(a & 1))
}

// mulMod multiplies a and b modulo x^64 + q bit by bit (the book's mul). It
// is slow (64 steps) but independent of any table; IsPrimitive uses it.
func mulMod(a, b, q uint64) uint64 {
	var r uint64
	for b != 0 {
		r ^= a & -(b >> 63) // coefficient of the lowest remaining degree of b
		a = mulX(a, q)
		b <<= 1
	}
	return r
}

// sqrXPow returns x^(2^k) mod x^64 + q by k squarings.
func sqrXPow(k int, q uint64) uint64 {
	v := xPoly
	for ; k > 0; k-- {
		v = mulMod(v, v, q)
	}
	return v
}

// powX returns x^e mod x^64 + q by left-to-right square-and-multiply;
// multiplying by the base x is a shift.
func powX(e, q uint64) uint64 {
	r := one
	for i := 63 - bits.LeadingZeros64(e); i >= 0; i-- {
		r = mulMod(r, r, q)
		if e>>uint(i)&1 != 0 {
			r = mulX(r, q)
		}
	}
	return r
}

// IsIrreducible reports whether p = x^64 + q is irreducible over GF(2).
//
// It applies Rabin's irreducibility test: a polynomial p of degree n is
// irreducible if and only if p divides x^(2^n) - x and, for every prime r
// dividing n, gcd(x^(2^(n/r)) - x, p) = 1. For n = 64 the only prime divisor
// is 2, so the conditions are x^(2^64) ≡ x (mod p) and
// gcd(x^(2^32) - x, p) = 1. (The first says p is squarefree, since
// x^(2^64) - x is, and that every irreducible factor of p has a degree
// dividing 64; the second rules out factors of degree dividing 32, leaving
// p itself.)
// Cost: about 100 multiplications in GF(2)[x]/(p), tens of microseconds.
func IsIrreducible(p Poly) bool {
	q := uint64(p)
	if q&one == 0 { // p(0) = 0: p is divisible by x
		return false
	}
	if sqrXPow(64, q) != xPoly {
		return false
	}
	r := sqrXPow(32, q) ^ xPoly // x^(2^32) - x mod p, reflected
	return gcdWithP(q, r) == 1
}

// IsPrimitive reports whether p = x^64 + q is primitive: irreducible, with x
// generating the whole multiplicative group of GF(2)[x]/(p) = GF(2^64), that
// is, x has order 2^64 - 1 modulo p (book 3.3).
//
// The test: p(0) = 1 (else x is not invertible); x^(2^64) ≡ x, so the order
// of x divides 2^64 - 1; and x^((2^64-1)/r) ≢ 1 for each prime factor r of
// 2^64 - 1 (3, 5, 17, 257, 641, 65537, 6700417), so the order is no proper
// divisor: it is exactly 2^64 - 1. The order test alone already implies
// irreducibility (if p were reducible the unit group of GF(2)[x]/(p) would
// have fewer than 2^64 - 1 elements, and the order of x divides its size);
// IsPrimitive nevertheless runs the full IsIrreducible test first, so the
// two functions can never disagree. Cost: a few hundred multiplications,
// well under a millisecond.
func IsPrimitive(p Poly) bool {
	if !IsIrreducible(p) {
		return false
	}
	q := uint64(p)
	for _, r := range primeFactors {
		if powX(^uint64(0)/r, q) == one {
			return false
		}
	}
	return true
}

// RandomPrimitive returns a primitive polynomial of degree 64 drawn from the
// stream rng.New(rng.Key(seed, "rabin")): it generates candidates with a
// non-zero constant term and keeps the first that IsPrimitive accepts (book
// 3.3). The result is a pure function of seed, identical on every platform,
// and frozen (golden vectors pin it). About one candidate in 64 is
// primitive (φ(2^64-1)/64 primitive polynomials among 2^63 candidates), so
// a call costs roughly a millisecond.
func RandomPrimitive(seed uint64) Poly {
	s := rng.New(rng.Key(seed, rabinLabel))
	for {
		p := Poly(s.Uint64() | one)
		if IsPrimitive(p) {
			return p
		}
	}
}

// gcdWithP returns gcd(x^64 + q, r) in conventional order (bit i holds the
// coefficient of x^i), where q and r are reflected; r has degree < 64.
func gcdWithP(q, r uint64) uint64 {
	b := bits.Reverse64(r)
	if b == 0 {
		return 0 // gcd(p, 0) = p, which is not 1; callers only compare with 1
	}
	// a = p mod b, with p = x^64 + P split so that every value fits 64 bits.
	x63 := polyMod(one, b) // x^63 mod b, degree < deg b <= 63
	x64 := polyMod(x63<<1, b)
	a := polyMod(bits.Reverse64(q), b) ^ x64
	for a != 0 {
		a, b = polyMod(b, a), a
	}
	return b
}

// polyMod returns a mod b in conventional order; b must be non-zero.
func polyMod(a, b uint64) uint64 {
	db := bits.Len64(b)
	for {
		da := bits.Len64(a)
		if da < db {
			return a
		}
		a ^= b << uint(da-db)
	}
}
