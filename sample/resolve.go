package sample

import (
	"math/bits"

	"github.com/neardup/neardup/internal/rng"
)

// slotBuf holds, for each slot, the features tying for the best leading key
// so far (book 3.2: minprefix, buf, nInBuf). A smaller key is better. The
// tie among buffered features is broken by a full per-(feature, slot) tail
// hash, smaller wins (ResolveBuf).
type slotBuf struct {
	best []uint32 // best key per slot; noKey when empty
	n    []uint16 // buffered candidates per slot
	ids  []uint64 // ids[slot*blen : slot*blen+n[slot]]
	blen int
	tkey uint64 // tail hash key
	lcp  bool   // count tail bits lazily (book 4.1) instead of 64 per tail
	bits uint64 // random bits spent on tails
}

const noKey = ^uint32(0)

func newSlotBuf(k, blen int, tkey uint64, lcp bool) slotBuf {
	// offer resolves a full buffer down to one candidate and then adds
	// one: a buffer needs room for two (blen = 1 used to write the extra
	// candidate into the next slot's buffer).
	blen = max(blen, 2)
	return slotBuf{best: make([]uint32, k), n: make([]uint16, k), ids: make([]uint64, k*blen),
		blen: blen, tkey: tkey, lcp: lcp}
}

func (b *slotBuf) reset(k int) {
	for i := range b.best[:k] {
		b.best[i] = noKey
		b.n[i] = 0
	}
}

// tail is the tie-breaking hash of feature id in slot i.
func (b *slotBuf) tail(id uint64, i int) uint64 { return rng.Hash2(b.tkey, id, uint64(i)) }

// offer considers feature id with leading key key for slot i.
func (b *slotBuf) offer(i int, key uint32, id uint64) {
	switch {
	case key < b.best[i]:
		b.best[i] = key
		b.ids[i*b.blen] = id
		b.n[i] = 1
	case key == b.best[i]:
		buf := b.ids[i*b.blen : i*b.blen+int(b.n[i])]
		for _, x := range buf {
			if x == id { // duplicate feature: no amount of tail separates it
				return
			}
		}
		if len(buf) == b.blen {
			b.resolve(i)
		}
		b.ids[i*b.blen+int(b.n[i])] = id
		b.n[i]++
	}
}

// resolve keeps only the buffered feature of slot i with the smallest tail.
// Bits: 64 per tail evaluated (AltaVista), or, in the lazy model (book 4.1),
// the bits a bit-at-a-time comparison examines: every candidate reveals bits
// until it falls behind the leader, the winner until all others have.
func (b *slotBuf) resolve(i int) {
	nn := int(b.n[i])
	if nn <= 1 {
		return
	}
	buf := b.ids[i*b.blen : i*b.blen+nn]
	var tails [1024]uint64
	t := tails[:nn]
	w := 0
	for c, id := range buf {
		t[c] = b.tail(id, i)
		if t[c] < t[w] {
			w = c
		}
	}
	if b.lcp {
		rounds := 0
		for c := range t {
			if c != w {
				rounds = max(rounds, bits.LeadingZeros64(t[c]^t[w])+1)
			}
		}
		for c := range t {
			if c == w {
				b.bits += uint64(rounds)
			} else {
				b.bits += uint64(min(bits.LeadingZeros64(t[c]^t[w])+1, rounds))
			}
		}
	} else {
		b.bits += 64 * uint64(nn)
	}
	buf[0] = buf[w]
	b.n[i] = 1
}

// bitReader serves the bits of a stream lazily, low bit first (book 4.1,
// RandomBits), and counts them.
type bitReader struct {
	st   rng.Stream
	w    uint64
	nb   uint
	used uint64
}

// run returns the number of bits up to and including the first one bit.
func (r *bitReader) run() int {
	res := 0
	for r.w == 0 {
		res += int(r.nb)
		r.w, r.nb = r.st.Uint64(), 64
	}
	tz := uint(bits.TrailingZeros64(r.w)) + 1
	r.w >>= tz // tz == 64 leaves 0
	r.nb -= tz
	res += int(tz)
	r.used += uint64(res)
	return res
}

// take returns the next n ≤ 32 bits.
func (r *bitReader) take(n uint) uint64 {
	r.used += uint64(n)
	if r.nb >= n {
		v := r.w & (1<<n - 1)
		r.w >>= n
		r.nb -= n
		return v
	}
	lo, have := r.w, r.nb
	r.w, r.nb = r.st.Uint64(), 64
	v := (lo | r.w<<have) & (1<<n - 1)
	r.w >>= n - have
	r.nb -= n - have
	return v
}
