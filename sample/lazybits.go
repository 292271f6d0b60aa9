package sample

import (
	"math"
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// lazy is the lazy-bits sampler of book 4.1: each feature seeds one random
// bit stream, and slot i reads from it the run of bits up to the first one
// bit (expected length 2). The feature's value for slot i is the binary
// fraction 0.0…01 followed by a tail; the longest run wins, and features
// tying the longest run wait in a bounded buffer until a per-(feature, slot)
// tail hash breaks the tie (ResolveBuf, counted bit by bit as the lazy
// comparison would read them).
//
// Value of slot i: (255 − run)<<56 | tail>>8. Counter: run bits plus tie
// bits, about 2 per input per sample (book 4.1). Not safe for concurrent use
// (scratch); Clone for each goroutine.
type lazy struct {
	h     sketch.Header
	key   uint64
	buf   slotBuf
	needs []int32 // needs[r] = slots whose shortest acceptable run is r
	cnt   Counter
}

const runKeyBase = 0xFFFFFFFE // key = runKeyBase − run: a longer run is a smaller key

func newLazy(h sketch.Header, blen int) *lazy {
	return &lazy{h: h, key: rng.Key(h.Seed, uint64(sketch.LazyBits)), needs: make([]int32, maxNeed+1),
		buf: newSlotBuf(int(h.K), blen, rng.Key(h.Seed, uint64(sketch.LazyBits), 1), true)}
}

func (s *lazy) Header() sketch.Header { return s.h }
func (s *lazy) Clone() Sampler        { return newLazy(s.h, s.buf.blen) }
func (s *lazy) Counter() Counter      { return s.cnt }
func (s *lazy) ResetCounter()         { s.cnt = Counter{} }

func runByte(key uint32, max int) uint64 {
	r := int(runKeyBase - key)
	return uint64(max - min(r, max))
}

func (s *lazy) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	if len(fs) == 0 {
		return dst
	}
	k := int(s.h.K)
	b := &s.buf
	b.reset(k)
	b.bits = 0
	best := b.best[:k]
	var used uint64
	clear(s.needs)
	s.needs[0] = int32(k)
	minNeed := 0 // no slot takes a run shorter than this
	for _, f := range fs {
		used += s.feature(f.ID, k, minNeed)
		for s.needs[minNeed] == 0 {
			minNeed++
		}
	}
	dst, v := grow(dst, k)
	for i := range v {
		b.resolve(i)
		v[i] = runByte(best[i], 255)<<56 | b.tail(b.ids[i*b.blen], i)>>8
	}
	s.cnt.Inputs += uint64(len(fs))
	s.cnt.Samples += uint64(len(fs)) * uint64(k)
	s.cnt.Bits += used + b.bits
	return dst
}

// need is the shortest run a slot whose best key is best accepts (offer
// takes key ≤ best, and key = runKeyBase − run), clamped to maxNeed.
func need(best uint32) int {
	if best == noKey {
		return 0
	}
	return min(int(runKeyBase-best), maxNeed)
}

// maxNeed clamps the needs histogram; runs that long (probability 2^−256)
// only make the skip test conservative.
const maxNeed = 256

// feature offers feature id to the slots whose run from its stream is long
// enough, and returns the stream bits the k runs span (the bit position of
// the k-th one bit: the book's lazy cost).
//
// Slot i's run is the gap between the (i−1)-th and i-th one bits of the
// stream (low bit first, as bitReader.run reads it). Rather than walking
// every run, it works a 64-bit word at a time: popcount advances the slot
// index, and only one bits preceded by at least minNeed−1 zeros (found with
// shifted ANDs) can be runs that some slot accepts; those are checked
// against their slot exactly. The result is the same as reading the runs
// one by one (TestLazyFastPath).
func (s *lazy) feature(id uint64, k, minNeed int) (used uint64) {
	st := rng.New(id ^ s.key)
	zeros := min(max(minNeed-1, 0), 64) // zeros a candidate one bit needs below it
	base := 0                           // slot of the word's first one bit
	carry := 0                          // zeros carried from earlier words
	var consumed uint64                 // bits of earlier words
	for {
		w := st.Uint64()
		if w == 0 {
			carry += 64
			consumed += 64
			continue
		}
		ones := bits.OnesCount64(w)
		last := base+ones >= k // the k-th one bit is in this word
		// cand: one bits (other than the first) with ≥ zeros zeros below.
		cand := w & (w - 1)
		if zeros == 64 {
			cand = 0
		} else if zeros > 0 {
			cand &= zeroRuns(^w, zeros) << uint(zeros)
		}
		if first := bits.TrailingZeros64(w); carry+first+1 >= minNeed {
			s.try(base, carry+first+1, id)
		}
		for cand != 0 {
			p := bits.TrailingZeros64(cand)
			cand &= cand - 1
			below := w & (1<<uint(p) - 1)
			i := base + bits.OnesCount64(below)
			if i >= k {
				break
			}
			s.try(i, p-(63-bits.LeadingZeros64(below)), id)
		}
		if last {
			x := w
			for range k - base - 1 {
				x &= x - 1
			}
			return consumed + uint64(bits.TrailingZeros64(x)+1)
		}
		base += ones
		carry = bits.LeadingZeros64(w)
		consumed += 64
	}
}

// try offers id to slot i if its run qualifies, keeping the histogram of
// the slots' needs.
func (s *lazy) try(i, run int, id uint64) {
	b := &s.buf
	key, best := runKeyBase-uint32(run), b.best[i]
	if key > best {
		return
	}
	if key < best {
		s.needs[need(best)]--
		s.needs[min(run, maxNeed)]++
	}
	b.offer(i, key, id)
}

// zeroRuns returns the bits q of x such that bits q … q+n−1 are all set
// (n ≥ 1), treating bits above 63 as clear.
func zeroRuns(x uint64, n int) uint64 {
	for have := 1; have < n; {
		sh := min(have, n-have)
		x &= x >> uint(sh)
		have += sh
	}
	return x
}

// batched is the batched biased-bit sampler of book 4.2. Each slot's value
// gets a virtual leading bit that is 0 ("lucky") with probability
// p = 1 − e^(−1/m) (sketch.BatchedLuck), so in a block of m slots a feature
// is lucky nowhere with probability 1/e. Per feature and block, one uniform
// compared lazily with the binomial CDF gives the number K of lucky slots,
// log2 m bits each pick them (rejecting repeats), and only lucky slots read
// a lazy run (4.1). The lucky indicators are i.i.d. Bernoulli(p) per slot,
// so each slot still orders features by an i.i.d. key (lucky first, then the
// longer run, then the smaller tail): consistent and uniform. A slot no
// feature is lucky for (probability e^(−n/m)) is resolved by a second pass
// in which every feature reads an unlucky run from a per-(feature, slot)
// stream — the "patch up" of the book.
//
// Value: bit 63 = unlucky, bits 56–62 = 127 − run, then tail>>8.
// Header.Params = m. Counter: 12.65 bits per feature and block in
// expectation at m = 128 (TestBatchedBlockBits; the book's estimate is "just
// under 18"), about 0.1 bit per input per sample for long inputs, plus
// patch-ups for short ones. Not safe for
// concurrent use (scratch); Clone for each goroutine.
type batched struct {
	h       sketch.Header
	key     uint64
	ukey    uint64 // unlucky streams
	m       int
	buf     slotBuf
	cdf     map[int][]uint64 // block size → thresholds T_c = P(K ≤ c)·2^64
	unlucky []bool
	cnt     Counter
}

func newBatched(h sketch.Header, blen int) *batched {
	k, m := int(h.K), int(h.Params)
	s := &batched{h: h, m: m, key: rng.Key(h.Seed, uint64(sketch.LazyBitsBatched)),
		ukey:    rng.Key(h.Seed, uint64(sketch.LazyBitsBatched), 2),
		buf:     newSlotBuf(k, blen, rng.Key(h.Seed, uint64(sketch.LazyBitsBatched), 1), true),
		cdf:     map[int][]uint64{},
		unlucky: make([]bool, k)}
	p := sketch.BatchedLuck(m)
	for start := 0; start < k; start += m {
		mb := min(m, k-start)
		if _, ok := s.cdf[mb]; !ok {
			s.cdf[mb] = binomialThresholds(mb, p)
		}
	}
	return s
}

// BatchCounts returns the distribution of the number K of slots a feature
// is lucky for in a block of m slots of the batched sampler, each slot lucky
// with probability p: P(K = c) = C(m, c)·p^c·(1−p)^(m−c) for c = 0…m (book
// 4.2, "the probability of exactly k leading zeros"). The book's table is
// m = 128, p = 1/128 (bias b = 127/128); LazyBitsBatched uses p =
// sketch.BatchedLuck(m), for which P(K = 0) = 1/e. The sampler draws K by
// comparing one uniform with the cumulative sums of this distribution, so
// this is the distribution it samples from. p is clamped to [0, 1]; m < 0
// gives nil. Cost: O(m), allocates.
func BatchCounts(m int, p float64) []float64 {
	if m < 0 {
		return nil
	}
	pmf := make([]float64, m+1)
	if p >= 1 {
		pmf[m] = 1
		return pmf
	}
	p = max(p, 0)
	x := math.Pow(1-p, float64(m))
	for c := 0; c <= m; c++ {
		pmf[c] = x
		x *= float64(m-c) / float64(c+1) * p / (1 - p)
	}
	return pmf
}

// binomialThresholds returns T_0..T_{n−1} with T_c = ⌊P(Bin(n, p) ≤ c)·2^64⌋
// (the cumulative sums of BatchCounts), saturating at 2^64−1.
func binomialThresholds(n int, p float64) []uint64 {
	t := make([]uint64, n)
	cdf := 0.0
	for c, pmf := range BatchCounts(n, p)[:n] {
		cdf += pmf
		if cdf >= 1 {
			t[c] = math.MaxUint64
		} else {
			t[c] = uint64(cdf * 0x1p64)
		}
	}
	return t
}

func (s *batched) Header() sketch.Header { return s.h }
func (s *batched) Clone() Sampler        { return newBatched(s.h, s.buf.blen) }
func (s *batched) Counter() Counter      { return s.cnt }
func (s *batched) ResetCounter()         { s.cnt = Counter{} }

func lcpBits(u, t uint64) uint64 { return uint64(min(bits.LeadingZeros64(u^t)+1, 64)) }

func (s *batched) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	if len(fs) == 0 {
		return dst
	}
	k := int(s.h.K)
	b := &s.buf
	b.reset(k)
	b.bits = 0
	best := b.best[:k]
	var used uint64
	var chosen [128]int
	for _, f := range fs {
		r := bitReader{st: rng.New(f.ID ^ s.key)}
		for start := 0; start < k; start += s.m {
			mb := min(s.m, k-start)
			t := s.cdf[mb]
			u := r.st.Uint64()
			K := 0
			for K < mb && u >= t[K] {
				K++
			}
			// Lazily comparing u with the thresholds bracketing it reads
			// one bit past their longest common prefix with u.
			nb := uint64(0)
			if K > 0 {
				nb = lcpBits(u, t[K-1])
			}
			if K < mb {
				nb = max(nb, lcpBits(u, t[K]))
			}
			used += nb
			width := uint(bits.Len(uint(mb - 1)))
			for c := 0; c < K; {
				x := int(r.take(width))
				if x >= mb {
					continue
				}
				dup := false
				for _, y := range chosen[:c] {
					dup = dup || y == x
				}
				if !dup {
					chosen[c] = x
					c++
				}
			}
			for _, x := range chosen[:K] {
				i := start + x
				if key := runKeyBase - uint32(r.run()); key <= best[i] {
					b.offer(i, key, f.ID)
				}
			}
		}
		used += r.used
	}
	// Patch up slots no feature was lucky for.
	for i := range best {
		s.unlucky[i] = best[i] == noKey
		if !s.unlucky[i] {
			continue
		}
		for _, f := range fs {
			r := bitReader{st: rng.New(rng.Hash2(s.ukey, f.ID, uint64(i)))}
			if key := runKeyBase - uint32(r.run()); key <= best[i] {
				b.offer(i, key, f.ID)
			}
			used += r.used
		}
	}
	dst, v := grow(dst, k)
	for i := range v {
		b.resolve(i)
		x := runByte(best[i], 127)<<56 | b.tail(b.ids[i*b.blen], i)>>8
		if s.unlucky[i] {
			x |= 1 << 63
		}
		v[i] = x
	}
	s.cnt.Inputs += uint64(len(fs))
	s.cnt.Samples += uint64(len(fs)) * uint64(k)
	s.cnt.Bits += used + b.bits
	return dst
}
