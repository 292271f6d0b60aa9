package chunk

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/neardup/neardup/internal/rng"
)

// Frozen seeds of the boundary hashes: changing them changes every cut point
// (golden vectors in testdata pin them).
const (
	hashSeed  = 0x6368_756e_6b5f_7631 // "chunk_v1"
	gearLabel = 1
	polyLabel = 2
	runLead   = uint64(1) << 56 // -gear[v] stays above this: runs have a nonzero lead
)

// leadBits returns the width of the lead: 8 bits (the book's lead byte) up
// to 16, chosen so that a window of w ≥ 2048 boundaries holds about 8 to 16
// candidates on random data and lacks one with probability below e^-8.
// Narrower windows keep the byte and lack one more often: 1 in 55 at 1024
// boundaries (the book's figure), 1 in 7.45 at 513 (Avg 1 KiB); see
// TestLeadByteOddsBook.
func leadBits(w int) uint {
	b := uint(bits.Len(uint(w))) - 1 // floor(log2 w)
	return min(max(b-3, 8), 16)
}

var (
	// gear is the table of the short hash: gear(e) = sum over the 64 bytes
	// b_k before e of gear[b_k] << k. A run of one repeated byte v has the
	// constant gear value -gear[v] (mod 2^64); the table is drawn so that
	// this value never has lead byte 0, so such runs never hold candidates
	// and are left to the fallback, which skips them in constant time.
	gear [256]uint64
	// polyPow[k] = B^(47-k) for the long hash sum_k w[k]*B^(47-k).
	polyPow [LongWindow]uint64
	// polyOut = B^48, to roll the long hash.
	polyOut uint64
	polyB   uint64
)

func init() {
	s := rng.New(rng.Key(hashSeed, gearLabel))
	for i := range gear {
		for {
			v := s.Uint64()
			if -v >= runLead {
				gear[i] = v
				break
			}
		}
	}
	p := rng.New(rng.Key(hashSeed, polyLabel))
	polyB = p.Uint64() | 1
	x := uint64(1)
	for k := LongWindow - 1; k >= 0; k-- {
		polyPow[k] = x
		x *= polyB
	}
	polyOut = x
}

// gearOf returns the gear hash of w (the last 64 bytes matter).
func gearOf(w []byte) uint64 {
	var h uint64
	for _, b := range w {
		h = h<<1 + gear[b]
	}
	return h
}

// polyOf returns the raw polynomial hash of the 48-byte window w.
func polyOf(w []byte) uint64 {
	w = w[:LongWindow]
	var s0, s1, s2, s3 uint64
	for k := 0; k < LongWindow; k += 4 {
		s0 += uint64(w[k]) * polyPow[k]
		s1 += uint64(w[k+1]) * polyPow[k+1]
		s2 += uint64(w[k+2]) * polyPow[k+2]
		s3 += uint64(w[k+3]) * polyPow[k+3]
	}
	return s0 + s1 + s2 + s3
}

// compose builds H from a gear value (its top 64-shift bits, the lead) and
// a raw polynomial hash (mixed, its top shift bits below the lead).
func compose(g, p uint64, shift uint) uint64 {
	return g>>shift<<shift | rng.Mix64(p)>>(64-shift)
}

// boundaryHash returns H(e) with a lead of lb bits for the boundary after
// window, computed from its last 64 bytes.
func boundaryHash(window []byte, lb uint) uint64 {
	n := len(window)
	return compose(gearOf(window[n-Window:]), polyOf(window[n-LongWindow:]), 64-lb)
}

type entry struct {
	pos int
	h   uint64
}

// ring is the monotone ring buffer of book 6.2: positions increasing and
// hashes strictly increasing from the front (the rightmost minimum) to the
// back. It grows by doubling when full, which happens only on adversarial
// (increasing) hash sequences.
type ring struct {
	e       []entry
	head, n int
}

func (r *ring) reset() { r.head, r.n = 0, 0 }

// push adds (pos, h) with pos larger than every position held: a new
// minimum (or tie) resets the ring; otherwise entries with a hash >= h are
// dropped from the back.
func (r *ring) push(pos int, h uint64) {
	if len(r.e) == 0 {
		r.e = make([]entry, 64)
	}
	mask := len(r.e) - 1
	if r.n == 0 || h <= r.e[r.head].h {
		r.head, r.n = 0, 1
		r.e[0] = entry{pos, h}
		return
	}
	for r.e[(r.head+r.n-1)&mask].h >= h {
		r.n--
	}
	if r.n == len(r.e) {
		r.grow()
		mask = len(r.e) - 1
	}
	r.e[(r.head+r.n)&mask] = entry{pos, h}
	r.n++
}

func (r *ring) grow() {
	e := make([]entry, 2*len(r.e))
	for i := 0; i < r.n; i++ {
		e[i] = r.e[(r.head+i)&(len(r.e)-1)]
	}
	r.e, r.head = e, 0
}

// popFront removes and returns the front (the rightmost minimum).
func (r *ring) popFront() entry {
	f := r.e[r.head]
	r.head = (r.head + 1) & (len(r.e) - 1)
	r.n--
	return f
}

// dropBefore removes front entries at positions below pos.
func (r *ring) dropBefore(pos int) {
	for r.n > 0 && r.e[r.head].pos < pos {
		r.head = (r.head + 1) & (len(r.e) - 1)
		r.n--
	}
}

func (r *ring) shift(d int) {
	for i := 0; i < r.n; i++ {
		r.e[(r.head+i)&(len(r.e)-1)].pos -= d
	}
}

// winnower holds the state of cut-point selection over one input. Positions
// are offsets into the caller's current buffer.
type winnower struct {
	min, max int
	mode     Mode
	shift    uint   // 64 - lead bits
	cand     uint64 // gear values below cand have a zero lead
	r        ring
	next     int    // last boundary evaluated, or -1
	g        uint64 // gear(next)
	p        uint64 // raw polynomial hash at next (plain mode)
}

func newWinnower(o Options) winnower {
	shift := 64 - leadBits(o.Max-o.Min+1)
	return winnower{min: o.Min, max: o.Max, mode: o.Mode, next: -1, shift: shift, cand: 1 << shift}
}

func (w *winnower) reset() {
	w.r.reset()
	w.next = -1
}

// rebase moves the origin of positions d bytes to the right (the caller
// dropped d bytes from the front of its buffer).
func (w *winnower) rebase(d int) {
	w.r.shift(d)
	if w.next >= 0 {
		w.next -= d
	}
}

// cut returns the end of the chunk that starts at c in d. It needs
// len(d)-c > max unless final (d ends the input); when final and at most max
// bytes remain, the rest is the last chunk.
func (w *winnower) cut(d []byte, c int, final bool) int {
	if len(d)-c <= w.max {
		w.reset()
		return len(d)
	}
	lo, hi := c+w.min, c+w.max
	w.r.dropBefore(lo)
	if w.next < lo {
		w.warm(d, lo)
	}
	if w.mode == Plain {
		w.scanPlain(d, hi)
		return w.r.popFront().pos
	}
	w.scanFast(d, hi)
	if w.r.n == 0 {
		return fallback(d, lo, hi, w.shift)
	}
	return w.r.popFront().pos
}

// warm starts the hashes at boundary lo and considers it.
func (w *winnower) warm(d []byte, lo int) {
	w.next = lo
	w.g = gearOf(d[lo-Window : lo])
	if w.mode == Plain {
		w.p = polyOf(d[lo-LongWindow : lo])
		w.r.push(lo, compose(w.g, w.p, w.shift))
		return
	}
	if w.g < w.cand {
		w.r.push(lo, compose(w.g, polyOf(d[lo-LongWindow:lo]), w.shift))
	}
}

// scanFast advances the gear hash to boundary hi, pushing the positions
// whose lead byte is zero with their long hash. Two bytes are taken per
// step: g2 = 4g + (2t0 + t1) keeps the loop-carried chain at one
// shift-and-add per two bytes, and g1 is computed beside it for its check.
func (w *winnower) scanFast(d []byte, hi int) {
	g, e, cand := w.g, w.next, w.cand
	p := d[e:hi]
	for len(p) >= 4 {
		t0, t1, t2, t3 := gear[p[0]], gear[p[1]], gear[p[2]], gear[p[3]]
		g1 := g<<1 + t0
		g2 := g<<2 + (t0<<1 + t1)
		g3 := g2<<1 + t2
		g4 := g2<<2 + (t2<<1 + t3)
		if min(g1, g2, g3, g4) < cand {
			w.candidates(d, e, g1, g2, g3, g4)
		}
		g, e, p = g4, e+4, p[4:]
	}
	for _, b := range p {
		g = g<<1 + gear[b]
		e++
		if g < cand {
			w.r.push(e, compose(g, polyOf(d[e-LongWindow:e]), w.shift))
		}
	}
	w.g, w.next = g, hi
}

// candidates pushes those of boundaries e+1..e+4 (gear values g1..g4) whose
// lead byte is zero.
func (w *winnower) candidates(d []byte, e int, g1, g2, g3, g4 uint64) {
	for i, g := range [4]uint64{g1, g2, g3, g4} {
		if g < w.cand {
			x := e + 1 + i
			w.r.push(x, compose(g, polyOf(d[x-LongWindow:x]), w.shift))
		}
	}
}

// scanPlain advances both hashes to boundary hi, pushing every position.
func (w *winnower) scanPlain(d []byte, hi int) {
	g, p := w.g, w.p
	for e := w.next + 1; e <= hi; e++ {
		b := d[e-1]
		g = g<<1 + gear[b]
		p = p*polyB + uint64(b) - uint64(d[e-1-LongWindow])*polyOut
		w.r.push(e, compose(g, p, w.shift))
	}
	w.g, w.p, w.next = g, p, hi
}

// fallback returns the rightmost minimum of H over boundaries [lo, hi] when
// no boundary there has lead byte 0. The long hash is evaluated only at
// boundaries whose lead byte ties the smallest seen so far, and a run of one
// repeated byte longer than the window (where H is constant) is crossed in
// one step.
func fallback(d []byte, lo, hi int, shift uint) int {
	g := gearOf(d[lo-Window : lo])
	run := 1 // length of the run of equal bytes ending at d[e-1]
	for run < Window && d[lo-1-run] == d[lo-1] {
		run++
	}
	best, bestH := -1, uint64(math.MaxUint64)
	bestLead := uint64(math.MaxUint64)
	for e := lo; ; {
		lead := g >> shift
		if lead <= bestLead {
			h := compose(g, polyOf(d[e-LongWindow:e]), shift)
			if lead < bestLead || h <= bestH {
				best, bestH, bestLead = e, h, lead
			}
		}
		if run >= Window && e < hi {
			// Boundaries e+1 .. end have the same constant window.
			end := runEnd(d, e, hi)
			if best == e {
				best = end
			}
			e = end
			run = Window + 1
		}
		if e == hi {
			return best
		}
		b := d[e]
		g = g<<1 + gear[b]
		if b == d[e-1] {
			run++
		} else {
			run = 1
		}
		e++
	}
}

// runEnd returns the largest boundary x <= hi such that d[e-1:x] repeats the
// byte d[e-1].
func runEnd(d []byte, e, hi int) int {
	v := d[e-1]
	pat := uint64(v) * 0x0101010101010101
	i := e
	for ; i+8 <= hi; i += 8 {
		if binary.LittleEndian.Uint64(d[i:]) != pat {
			break
		}
	}
	for ; i < hi && d[i] == v; i++ {
	}
	return i
}
