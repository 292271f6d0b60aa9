package rabin

import (
	"encoding/binary"
	"math/big"
	"math/bits"
)

// Extend's carry-less route. Where the CPU multiplies polynomials over
// GF(2) in one instruction (PCLMULQDQ on amd64), Extend folds long inputs
// 64 bytes per step, as table-free CRC implementations do, instead of
// eight table lookups per 8 bytes, and gets the same fingerprints
// (TestExtendCL and FuzzExtendCL check the two routes against each other,
// TestExtendCLModel the pure-Go model extendCLGo, and the golden vectors
// all of them).
//
// In the reflected order of this package, the carry-less product of a and
// b, as a 128-bit integer, holds x^(126-n) in bit n, so read as a 128-bit
// polynomial with x^(127-n) in bit n it is a·b·x. Multiplying by a
// constant c/x mod p therefore gives, with no shift, a value congruent to
// a·c whose low word is its part of degree 64 and up and whose high word
// the part below: the layout of 16 input bytes loaded little-endian (the
// earlier 8 bytes carry the higher degrees). Four 16-byte lanes each step
// as S·x^512 + the next block, S·x^512 being congruent to
// clmul(S_h, x^575) xor clmul(S_l, x^511); the lanes then fold into one by
// x^128 each, and the fingerprint is S·x^64 mod p: the part of degree 64
// and up folded once more (by x^127) and Barrett's reduction (mu =
// floor(x^128/p) = x^64 + m):
//
//	Q = h xor floor(h·m / x^64),  h·x^64 mod p = (Q·p) mod x^64,
//
// computed as low(clmul(h, m<<1)) and high(clmul(Q, p<<1)) xor Q (the bit
// shifted out of p is its x^0 term, 1 for every irreducible p).
type clFold struct {
	k512 [2]uint64 // x^575, x^511 mod p: a lane's step
	k128 [2]uint64 // x^191, x^127 mod p: lanes into one
	z    uint64    // x^127 mod p: the last fold
	m    uint64    // Barrett: m<<1
	qc   uint64    // Barrett: p<<1
	k2k  [2]uint64 // x^2111, x^2047 mod p: a lane's step on the AVX-512 route (Hash2)
}

// clMin is the length from which Extend takes the carry-less route.
const clMin = 128

// newCLFold returns the constants for t, or nil if p(0) = 0 (p is then not
// irreducible, and the route's Barrett step would not hold).
func newCLFold(t *Table) *clFold {
	if t.q&one == 0 {
		return nil
	}
	xn := func(n uint64) uint64 { return t.shiftBytes(one>>(n%8), n/8) } // x^n mod p
	c := &clFold{k512: [2]uint64{xn(575), xn(511)}, k128: [2]uint64{xn(191), xn(127)}, z: xn(127), k2k: [2]uint64{xn(2111), xn(2047)}}
	// mu = floor(x^128 / p) by long division, in the normal order (bit i
	// holds x^i).
	p := new(big.Int).SetUint64(bits.Reverse64(t.q))
	p.SetBit(p, 64, 1)
	r := new(big.Int).SetBit(new(big.Int), 128, 1)
	mu, s := new(big.Int), new(big.Int)
	for d := 128; d >= 64; d-- {
		if r.Bit(d) == 1 {
			mu.SetBit(mu, d-64, 1)
			r.Xor(r, s.Lsh(p, uint(d-64)))
		}
	}
	c.m = bits.Reverse64(mu.Uint64()) << 1 // Uint64 drops x^64
	c.qc = t.q << 1
	return c
}

// clmul64 returns the carry-less product of a and b as (high, low) words:
// the software model of PCLMULQDQ.
func clmul64(a, b uint64) (hi, lo uint64) {
	for i := uint(0); i < 64; i++ {
		if b>>i&1 != 0 {
			lo ^= a << i
			hi ^= a >> (64 - i) // Go: a >> 64 = 0
		}
	}
	return hi, lo
}

// extendCLGo is the pure-Go model of extendCL (clmul_amd64.s), step for
// step: Extend(f, data) for len(data) a multiple of 64, at least 64. A
// lane is its two words as loaded: [0] the part of degree 64 and up, [1]
// the part below.
func extendCLGo(f uint64, data []byte, c *clFold) uint64 {
	load := func(i int) [2]uint64 {
		return [2]uint64{binary.LittleEndian.Uint64(data[i:]), binary.LittleEndian.Uint64(data[i+8:])}
	}
	// fold returns x times k's power (x^(a+64)/x, x^a/x) plus b.
	fold := func(x, k, b [2]uint64) [2]uint64 {
		h1, l1 := clmul64(x[0], k[0])
		h2, l2 := clmul64(x[1], k[1])
		return [2]uint64{l1 ^ l2 ^ b[0], h1 ^ h2 ^ b[1]}
	}
	var s [4][2]uint64
	for l := range s {
		s[l] = load(16 * l)
	}
	s[0][0] ^= f
	for i := 64; i < len(data); i += 64 {
		for l := range s {
			s[l] = fold(s[l], c.k512, load(i+16*l))
		}
	}
	x := s[0]
	for l := 1; l < 4; l++ {
		x = fold(x, c.k128, s[l])
	}
	uh, ul := clmul64(x[0], c.z) // (high, low) words: U_l, U_h
	h := x[1] ^ ul
	_, l := clmul64(h, c.m)
	q := h ^ l
	hq, _ := clmul64(q, c.qc)
	return hq ^ q ^ uh
}
