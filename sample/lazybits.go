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
	h   sketch.Header
	key uint64
	buf slotBuf
	cnt Counter
}

const runKeyBase = 0xFFFFFFFE // key = runKeyBase − run: a longer run is a smaller key

func newLazy(h sketch.Header, blen int) *lazy {
	return &lazy{h: h, key: rng.Key(h.Seed, uint64(sketch.LazyBits)),
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
	for _, f := range fs {
		r := bitReader{st: rng.New(f.ID ^ s.key)}
		for i := range best {
			if key := runKeyBase - uint32(r.run()); key <= best[i] {
				b.offer(i, key, f.ID)
			}
		}
		used += r.used
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
// Header.Params = m. Counter: about 18/128 bits per input per sample for
// long inputs at m = 128, plus patch-ups for short ones. Not safe for
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

// binomialThresholds returns T_0..T_{n−1} with T_c = ⌊P(Bin(n, p) ≤ c)·2^64⌋,
// saturating at 2^64−1.
func binomialThresholds(n int, p float64) []uint64 {
	t := make([]uint64, n)
	pmf := math.Pow(1-p, float64(n))
	cdf := 0.0
	for c := 0; c < n; c++ {
		cdf += pmf
		if cdf >= 1 {
			t[c] = math.MaxUint64
		} else {
			t[c] = uint64(cdf * 0x1p64)
		}
		pmf *= float64(n-c) / float64(c+1) * p / (1 - p)
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
