// Package simhash provides Charikar's sign-of-projection sketches (SimHash)
// of weighted feature sets, b-bit min-hash bit strings, and Hamming
// distance between such bit sketches.
//
// SimHash projects a document's weighted feature vector onto random
// directions and keeps one bit per direction: the sign of the projection.
// Each feature gets a pseudo-random ±1 coordinate per bit (a bit of a keyed
// 64-bit hash of its ID), the bit is set when the weighted sum is positive,
// and two documents differ in a bit with probability about θ/π, θ the angle
// between their vectors (Charikar 2002; Manku, Jain and Das Sarma 2007 used
// 64-bit SimHash with Hamming distance <= 3 for web near-duplicates). The
// second kind of bit sketch packs b bits of each min-hash sample (Manasse,
// "On the Efficient Determination of Most Near Neighbors" (the book) 2.4):
// samples agree with probability J + (1−J)/2^b. Both are compared by Hamming
// distance, and package lsh's HammingIndex finds all sketches within a
// distance without a scan (book 2.5).
//
// With ±1 coordinates the θ/π law is exact only in the limit of many
// comparable weights; the tests compare with the exact probability for the
// ±1 projection computed by enumeration. SimHash estimates cosine, not
// Jaccard similarity; it is not a consistent sampler and not cryptographic.
package simhash

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// ErrBits is returned for an unsupported sketch width.
var ErrBits = errors.New("simhash: bits must be a positive multiple of 64")

// Hasher computes SimHash sketches of a fixed width. Make one with New; the
// zero value is not usable. It holds a scratch accumulator, so it is not
// safe for concurrent use: use one Hasher per goroutine (they are cheap).
// Cost: about one hash and 64 additions per feature per 64 bits.
type Hasher struct {
	bits  int
	seeds []uint64 // per 64-bit word
	acc   []float64
}

// New returns a Hasher for sketches of nbits bits (a positive multiple of
// 64) keyed by seed. Sketches are comparable only with equal nbits and seed.
func New(nbits int, seed uint64) (*Hasher, error) {
	if nbits <= 0 || nbits%64 != 0 {
		return nil, fmt.Errorf("%w: %d", ErrBits, nbits)
	}
	h := &Hasher{bits: nbits, seeds: make([]uint64, nbits/64), acc: make([]float64, nbits)}
	for w := range h.seeds {
		h.seeds[w] = rng.Key(seed, 's', uint64(w))
	}
	return h, nil
}

// Bits returns the sketch width in bits; Words the number of uint64 words.
func (h *Hasher) Bits() int  { return h.bits }
func (h *Hasher) Words() int { return h.bits / 64 }

// Sum appends the sketch of features to dst as Bits()/64 words, bit i in
// word i/64 at position i%64 (the layout lsh.HammingIndex expects).
// Features with non-positive weight are ignored; an empty set gives all
// zero bits. No allocation when dst has room.
func (h *Hasher) Sum(dst []uint64, features []feature.Feature) []uint64 {
	for w, seed := range h.seeds {
		acc := (*[64]float64)(h.acc[w*64 : w*64+64])
		*acc = [64]float64{}
		accumulate(acc, seed, features)
		dst = append(dst, signs(acc))
	}
	return dst
}

// Sum64 returns the 64-bit SimHash of features under seed: the first word
// of New(64, seed).Sum. It keeps its accumulator on the stack, so it is safe
// for concurrent use and does not allocate.
func Sum64(seed uint64, features []feature.Feature) uint64 {
	var acc [64]float64
	accumulate(&acc, rng.Key(seed, 's', 0), features)
	return signs(&acc)
}

func accumulate(acc *[64]float64, seed uint64, features []feature.Feature) {
	for _, f := range features {
		w := f.Weight
		if !(w > 0) {
			continue
		}
		x := rng.Hash(seed, f.ID)
		// branch-free: the bits are random, so a branch would mispredict
		// half the time
		pm := [2]float64{-w, w}
		for j := range acc {
			acc[j] += pm[x&1]
			x >>= 1
		}
	}
}

func signs(acc *[64]float64) uint64 {
	var v uint64
	for j, a := range acc {
		if a > 0 {
			v |= 1 << j
		}
	}
	return v
}

// Distance returns the Hamming distance between two bit sketches of equal
// length: the number of differing bits.
func Distance(a, b []uint64) int {
	if len(a) != len(b) {
		panic("simhash: Distance of sketches of different lengths")
	}
	d := 0
	for i := range a {
		d += bits.OnesCount64(a[i] ^ b[i])
	}
	return d
}

// Cosine estimates the cosine similarity of two documents from the Hamming
// distance d between their nbits-bit SimHash sketches: cos(π d / nbits).
func Cosine(d, nbits int) float64 {
	return math.Cos(math.Pi * float64(d) / float64(nbits))
}

// MinHashBits appends the b-bit bit string of min-hash samples to dst: b
// bits of a rehash of sample i (rng.Hash under a per-position key, so
// accidental agreements are independent across positions, book 2.4) packed
// at bits [i·b, (i+1)·b), in ceil(len(samples)·b/64) words. Two samples that
// are equal give equal bits; unequal ones agree in all b bits with
// probability 2^-b. With b = 1 the Hamming distance counts disagreeing
// samples, whose expected number is k(1−J)/2. b must be in 1..64.
func MinHashBits(dst []uint64, samples []uint64, b int, seed uint64) []uint64 {
	if b < 1 || b > 64 {
		panic("simhash: MinHashBits needs 1 <= b <= 64")
	}
	mask := ^uint64(0)
	if b < 64 {
		mask = 1<<b - 1
	}
	base := rng.Key(seed, 'm', uint64(b))
	start := len(dst)
	for range (len(samples)*b + 63) / 64 {
		dst = append(dst, 0)
	}
	out := dst[start:]
	for i, s := range samples {
		v := rng.Hash(base+uint64(i), s) & mask
		pos := i * b
		w, off := pos/64, uint(pos%64)
		out[w] |= v << off
		if off+uint(b) > 64 {
			out[w+1] |= v >> (64 - off)
		}
	}
	return dst
}

// EstimateJaccard estimates Jaccard similarity from the Hamming distance d
// between b-bit strings of k samples made by MinHashBits with b = 1:
// agreement Q = 1 − d/k, J = 2Q − 1 (book 2.4), clamped to [0, 1].
func EstimateJaccard(d, k int) float64 {
	q := 1 - float64(d)/float64(k)
	return math.Max(0, math.Min(1, 2*q-1))
}
