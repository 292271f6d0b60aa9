package rabin

import (
	"math/big"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// refPrimes64 are book 3.3's prime factors of 2^64 - 1, copied here so the
// reference does not share the package's table.
var refPrimes64 = []uint64{3, 5, 17, 257, 641, 65537, 6700417}

func TestFactorsOf2To64Minus1(t *testing.T) {
	prod := big.NewInt(1)
	for _, r := range refPrimes64 {
		b := new(big.Int).SetUint64(r)
		if !b.ProbablyPrime(20) {
			t.Errorf("%d is not prime", r)
		}
		prod.Mul(prod, b)
	}
	want := new(big.Int).SetUint64(^uint64(0))
	if prod.Cmp(want) != 0 {
		t.Fatalf("product of factors = %v, want 2^64-1 = %v", prod, want)
	}
	if len(primeFactors) != len(refPrimes64) {
		t.Fatal("package factor table differs from the book's")
	}
	for i := range refPrimes64 {
		if primeFactors[i] != refPrimes64[i] {
			t.Fatal("package factor table differs from the book's")
		}
	}
}

func TestDefaultPoly(t *testing.T) {
	if got := RandomPrimitive(0); got != DefaultPoly {
		t.Fatalf("RandomPrimitive(0) = %#x, DefaultPoly = %#x", uint64(got), uint64(DefaultPoly))
	}
	if !IsPrimitive(DefaultPoly) || !refPrimitive(conv(DefaultPoly), refPrimes64) {
		t.Fatal("DefaultPoly is not primitive")
	}
}

// polyMulPlain multiplies two polynomials (conventional order, product of
// degree < 128) without reduction.
func polyMulPlain(a, b gf2) gf2 {
	var r gf2
	for i := b.deg(); i >= 0; i-- {
		r = r.shl(1)
		if b.bit(i) != 0 {
			r = r.xor(a)
		}
	}
	return r
}

// fromConv converts a degree-64 reference polynomial to a Poly.
func fromConv(t *testing.T, p gf2) Poly {
	t.Helper()
	if p.deg() != 64 {
		t.Fatalf("degree %d, want 64", p.deg())
	}
	var q uint64
	for i := 0; i < 64; i++ {
		q |= p.bit(i) << uint(63-i)
	}
	return Poly(q)
}

// TestKnownPolynomials classifies polynomials whose status is known from the
// literature or by construction, and checks each against the reference.
func TestKnownPolynomials(t *testing.T) {
	type tc struct {
		name      string
		p         Poly
		irr, prim bool
	}
	// Degree-32 irreducible factors used to build reducible degree-64
	// polynomials; their status is checked with the reference too.
	f1 := gf2{0, 1<<32 | 1<<22 | 1<<2 | 1<<1 | 1} // x^32+x^22+x^2+x+1, primitive
	f2 := gf2{0, 1<<32 | 1<<7 | 1<<3 | 1<<2 | 1}  // x^32+x^7+x^3+x^2+1, irreducible only
	primes32 := primeFactorsTrial(1<<32 - 1)
	if !refPrimitive(f1, primes32) || !refIrreducible(f2) || refPrimitive(f2, primes32) {
		t.Fatal("degree-32 factors are not what the comments say")
	}
	// Four distinct irreducible factors of degree 16: the product passes
	// x^(2^64) ≡ x (every factor degree divides 64), so only the gcd
	// condition rejects it.
	var quad gf2 = gf2{0, 1}
	for _, f := range []uint64{0x1002d, 0x10039, 0x1003f, 0x10053} {
		if !bruteIrreducible(16, f) {
			t.Fatalf("%#x is not irreducible", f)
		}
		quad = polyMulPlain(quad, gf2{0, f})
	}
	cases := []tc{
		// Watson (1962) and Xilinx XAPP052 (LFSR taps 64,63,61,60): a
		// primitive pentanomial and its reciprocal.
		{"x^64+x^4+x^3+x+1", polyFromExps(4, 3, 1, 0), true, true},
		{"x^64+x^63+x^61+x^60+1", polyFromExps(63, 61, 60, 0), true, true},
		{"DefaultPoly", DefaultPoly, true, true},
		{"x^64", 0, false, false},
		{"x^64+1 = (x+1)^64", polyFromExps(0), false, false},
		{"x^64+x = x(x^63+1)", polyFromExps(1), false, false},
		{"x^64+x^63+...+1 = (x^65-1)/(x-1)", Poly(^uint64(0)), false, false},
		{"f1·f2, degree-32 irreducibles", fromConv(t, polyMulPlain(f1, f2)), false, false},
		{"f1^2", fromConv(t, polyMulPlain(f1, f1)), false, false},
		{"four degree-16 irreducibles", fromConv(t, quad), false, false},
		// Irreducible but not primitive (found by search, pinned): the
		// order of x divides (2^64-1)/3, /17, and /15 respectively.
		{"irreducible, order | (2^64-1)/3", 0xed4ddc8f3a337d05, true, false},
		{"irreducible, order | (2^64-1)/17", 0xb797cd4f4fbd2934, true, false},
		{"irreducible, order | (2^64-1)/15", 0xd570ecab952d6c41, true, false},
	}
	// Swan's theorem: every trinomial of degree 64 (a multiple of 8) is
	// reducible, so there are no primitive degree-64 trinomials.
	for k := 1; k < 64; k++ {
		cases = append(cases, tc{"trinomial", polyFromExps(k, 0), false, false})
	}
	for _, c := range cases {
		if got := IsIrreducible(c.p); got != c.irr {
			t.Errorf("%s (%#x): IsIrreducible = %v, want %v", c.name, uint64(c.p), got, c.irr)
		}
		if got := IsPrimitive(c.p); got != c.prim {
			t.Errorf("%s (%#x): IsPrimitive = %v, want %v", c.name, uint64(c.p), got, c.prim)
		}
		if got := refIrreducible(conv(c.p)); got != c.irr {
			t.Errorf("%s (%#x): reference irreducible = %v, want %v", c.name, uint64(c.p), got, c.irr)
		}
		if got := refPrimitive(conv(c.p), refPrimes64); got != c.prim {
			t.Errorf("%s (%#x): reference primitive = %v, want %v", c.name, uint64(c.p), got, c.prim)
		}
	}
	// The product of degree-16 factors does satisfy x^(2^64) ≡ x: the case
	// really exercises the gcd condition.
	if q := uint64(fromConv(t, quad)); sqrXPow(64, q) != xPoly {
		t.Error("x^(2^64) ≢ x modulo the product of degree-16 irreducibles")
	}
}

// TestRandomCandidatesMatchReference compares IsIrreducible and IsPrimitive
// with the reference (Ben-Or and the order test in conventional order) on
// random degree-64 candidates with a constant term. About 1 in 32 of them is
// irreducible (about 2^64/64 irreducible polynomials among 2^63 candidates)
// and half of those primitive (φ(2^64-1)/(2^64-1) ≈ 0.4997), so 1500
// candidates give about 47 irreducible and 23 primitive ones; the test
// demands at least 10 of each (Poisson tail for 23 below 1e-3; the seed is
// fixed anyway), so both branches of each test are exercised.
func TestRandomCandidatesMatchReference(t *testing.T) {
	s := rng.New(14)
	var nIrr, nPrim int
	for i := 0; i < 1500; i++ {
		p := Poly(s.Uint64() | one)
		irr, prim := IsIrreducible(p), IsPrimitive(p)
		if r := refIrreducible(conv(p)); r != irr {
			t.Fatalf("%#x: IsIrreducible %v, reference %v", uint64(p), irr, r)
		}
		if r := refPrimitive(conv(p), refPrimes64); r != prim {
			t.Fatalf("%#x: IsPrimitive %v, reference %v", uint64(p), prim, r)
		}
		if irr {
			nIrr++
		}
		if prim {
			nPrim++
		}
	}
	if nIrr < 10 || nPrim < 10 {
		t.Fatalf("only %d irreducible and %d primitive among 1500 candidates", nIrr, nPrim)
	}
	t.Logf("1500 candidates: %d irreducible, %d primitive", nIrr, nPrim)
}

func TestRandomPrimitive(t *testing.T) {
	seen := map[Poly]uint64{}
	for seed := uint64(0); seed < 16; seed++ {
		p := RandomPrimitive(seed)
		if p != RandomPrimitive(seed) {
			t.Fatalf("seed %d: not deterministic", seed)
		}
		if uint64(p)&one == 0 {
			t.Fatalf("seed %d: no constant term", seed)
		}
		if !refPrimitive(conv(p), refPrimes64) {
			t.Fatalf("seed %d: %#x not primitive by the reference", seed, uint64(p))
		}
		if s, dup := seen[p]; dup {
			t.Fatalf("seeds %d and %d give the same polynomial", s, seed)
		}
		seen[p] = seed
	}
}

func TestPolyString(t *testing.T) {
	cases := map[Poly]string{
		polyFromExps(4, 3, 1, 0): "x^64 + x^4 + x^3 + x + 1",
		0:                        "x^64",
		polyFromExps(63, 0):      "x^64 + x^63 + 1",
	}
	for p, want := range cases {
		if got := p.String(); got != want {
			t.Errorf("%#x: String() = %q, want %q", uint64(p), got, want)
		}
	}
	if polyFromExps(4, 3, 1, 0) != 0xd800000000000000 {
		t.Error("documented example of the bit order is wrong")
	}
}
