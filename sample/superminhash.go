package sample

import (
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// superMinHash is Ertl's SuperMinHash (2017): feature d draws, from a stream
// keyed by d, a random permutation π_d of the k slots (Fisher–Yates, built
// lazily) and uniforms r_{d,0}, r_{d,1}, …, and slot π_d(j) receives the
// candidate j + r_{d,j}. Slot i keeps the minimum candidate over the set. A
// histogram of the slots' integer parts stops each feature's loop as soon as
// no remaining j can improve any slot, so long documents cost O(n + k log² k)
// draws instead of n·k. Each slot is a MinHash slot (P(a_i = b_i) = J) and the
// permutation correlates slots negatively: the estimator's variance is at
// most J(1−J)/k and smaller when n is not ≫ k.
//
// Values pack (j, r): j in the top B = bits.Len(k−1) bits, the top 64−B bits
// of r below, so comparing values compares j + r. Not safe for concurrent use
// (scratch); Clone for each goroutine. Cost: two stream words per loop step.
type superMinHash struct {
	h     sketch.Header
	key   uint64
	shift uint     // 64 − B
	p     []uint32 // permutation under construction
	q     []uint32 // stamp: p[j] valid for the current feature iff q[j] == stamp
	hist  []int32  // hist[j] = number of slots whose value has integer part j (clamped)
	stamp uint32
}

func newSuperMinHash(h sketch.Header) *superMinHash {
	k := int(h.K)
	return &superMinHash{
		h: h, key: rng.Key(h.Seed, uint64(sketch.SuperMinHash)),
		shift: 64 - uint(bits.Len(uint(k-1))),
		p:     make([]uint32, k), q: make([]uint32, k), hist: make([]int32, k),
	}
}

func (s *superMinHash) Header() sketch.Header { return s.h }
func (s *superMinHash) Clone() Sampler        { return newSuperMinHash(s.h) }

func (s *superMinHash) intPart(v uint64) int {
	if s.shift == 64 {
		return 0
	}
	return int(v >> s.shift)
}

func (s *superMinHash) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	if len(fs) == 0 {
		return dst
	}
	m := int(s.h.K)
	dst, h := grow(dst, m)
	for i := range h {
		h[i] = ^uint64(0)
		s.hist[i] = 0
	}
	s.hist[m-1] = int32(m)
	a := m - 1
	p, q, hist := s.p[:m], s.q[:m], s.hist[:m]
	rshift := 64 - s.shift
	for _, f := range fs {
		s.stamp++
		if s.stamp == 0 { // wrapped: invalidate every stamp
			clear(q)
			s.stamp = 1
		}
		stamp := s.stamp
		st := rng.New(f.ID ^ s.key)
		for j := 0; j <= a; j++ {
			r := st.Uint64()
			k := j + int(st.Intn(uint64(m-j)))
			if q[j] != stamp {
				q[j], p[j] = stamp, uint32(j)
			}
			if q[k] != stamp {
				q[k], p[k] = stamp, uint32(k)
			}
			p[j], p[k] = p[k], p[j]
			slot := p[j]
			var v uint64
			if rshift == 0 {
				v = r
			} else {
				v = uint64(j)<<s.shift | r>>rshift
			}
			if v < h[slot] {
				old := min(s.intPart(h[slot]), m-1)
				h[slot] = v
				if j < old {
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
