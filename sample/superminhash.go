package sample

import (
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// superMinHash is Ertl's SuperMinHash (2017, Algorithm 1): feature d draws,
// from random words keyed by d, a random permutation π_d of the k slots
// (Fisher–Yates, built lazily) and uniforms r_{d,0}, r_{d,1}, …, and slot
// π_d(j) receives the candidate j + r_{d,j}. Slot i keeps the minimum
// candidate over the set. A histogram of the slots' integer parts gives the
// largest integer part a of any slot, and each feature's loop stops once
// j > a, since no later candidate (≥ j) can improve any slot: for n ≫ k
// the expected cost is O(n + k log² k) steps instead of n·k. Each slot is a
// MinHash slot (P(a_i = b_i) = J) and the permutation correlates slots
// negatively: the estimator's variance is J(1−J)/k·α(k, n) with α ≤ 1, and
// α → 1 when n ≫ k.
//
// Version 2 makes each step cheap. Step j takes one 64-bit word w from the
// feature's stream and splits the 128-bit product w·(k−j) (Lemire's
// multiply-shift, with its rejection step so that the index is exactly
// uniform): the high word is the Fisher–Yates index in [0, k−j), the low
// word the uniform r. Given the index, the low word is uniform over an
// arithmetic progression of step k−j ≤ 2^B, so the top 64−B bits kept of it
// are uniform to within 2^−(64−B) — far below any statistical effect. Step 0
// uses the feature's hash Mix64(d ⊕ key) itself as its word and starts the
// stream only if the loop goes on, so once every slot has a value below 1
// (a = 0, the steady state for n ≫ k log k) a feature costs one hash and one
// multiply, like one permutation hashing. Only the permutation entries at
// positions ≥ j are ever read again, so a step writes just one (packed with
// its feature stamp in one word). Version 1 drew two stream words per step;
// its sketches compare as mismatched with version 2's.
//
// Values pack (j, r): j in the top B = bits.Len(k−1) bits, the top 64−B bits
// of r below, so comparing values compares j + r. Not safe for concurrent use
// (scratch); Clone for each goroutine.
type superMinHash struct {
	h     sketch.Header
	key   uint64
	shift uint     // 64 − B
	pq    []uint64 // stamp<<32 | p[j]: p[j] is valid for the current feature iff the stamp matches
	hist  []int32  // hist[j] = number of slots whose value has integer part j (clamped)
	stamp uint64   // current feature's stamp, in the high 32 bits
}

func newSuperMinHash(h sketch.Header) *superMinHash {
	k := int(h.K)
	return &superMinHash{
		h: h, key: rng.Key(h.Seed, uint64(sketch.SuperMinHash), 2),
		shift: 64 - uint(bits.Len(uint(k-1))),
		pq:    make([]uint64, k), hist: make([]int32, k),
	}
}

func (s *superMinHash) Header() sketch.Header { return s.h }
func (s *superMinHash) Clone() Sampler        { return newSuperMinHash(s.h) }

// uniformIndex returns a uniform index in [0, n) from w (drawing more words
// from st in the rare rejection case, probability < n/2^64) and the low
// word of the accepted product, a uniform fraction.
func uniformIndex(w, n uint64, st *rng.Stream) (idx, frac uint64) {
	hi, lo := bits.Mul64(w, n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(st.Uint64(), n)
		}
	}
	return hi, lo
}

func (s *superMinHash) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	if len(fs) == 0 {
		return dst
	}
	m := int(s.h.K)
	dst, h := grow(dst, m)
	hist := s.hist[:m]
	for i := range h {
		h[i] = ^uint64(0)
		hist[i] = 0
	}
	hist[m-1] = int32(m)
	a := m - 1
	pq := s.pq[:m]
	shift := s.shift & 63 // k = 1: shift 64 acts as 0 (j is always 0)
	rshift := (64 - s.shift) & 63
	key := s.key
	for _, f := range fs {
		w := rng.Mix64(f.ID ^ key)
		// Step 0: position 0 and the drawn position are both fresh, so
		// the slot is the drawn index itself.
		var st rng.Stream
		k0, r := uniformIndex(w, uint64(m), &st)
		if v, hv := r>>rshift, h[k0]; v < hv {
			h[k0] = v
			if old := int(min(hv>>shift, uint64(m-1))); old > 0 {
				hist[old]--
				hist[0]++
				for hist[a] == 0 {
					a--
				}
			}
		}
		if a == 0 {
			continue
		}
		s.stamp += 1 << 32
		if s.stamp == 0 { // wrapped: invalidate every stamp
			clear(pq)
			s.stamp = 1 << 32
		}
		stamp := s.stamp
		pq[k0] = stamp // p[k0] = 0 after the swap of step 0
		st = rng.New(w)
		for j := 1; j <= a; j++ {
			kk, r := uniformIndex(st.Uint64(), uint64(m-j), &st)
			kk += uint64(j)
			ej, ek := pq[j], pq[kk]
			pj, pk := uint64(j), kk
			if ej&^0xffffffff == stamp {
				pj = ej & 0xffffffff
			}
			if ek&^0xffffffff == stamp {
				pk = ek & 0xffffffff
			}
			pq[kk] = stamp | pj // the swap; position j is never read again
			if v, hv := uint64(j)<<shift|r>>rshift, h[pk]; v < hv {
				h[pk] = v
				if old := int(min(hv>>shift, uint64(m-1))); j < old {
					hist[old]--
					hist[j]++
					for hist[a] == 0 {
						a--
					}
				}
			}
		}
	}
	return dst
}
