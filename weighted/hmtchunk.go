package weighted

import (
	"fmt"
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// chunkTieBits is the width of the tie-breaking hash of a chunk (HMT
// section 3.3: "13 bits to figure out the minimum").
const chunkTieBits = 13

// SketchScaleChunked is SketchScale with the per-element randomness of HMT
// section 3.3 ("The benefits of tunable unweighted size"): the elements
// (a, 1), (a, 2), … of feature a at scale i take consecutive chunks of
// log₂B + 13 + b bits from one pseudo-random stream keyed by (seed, i, a) —
// log₂B bits choose the bin, 13 bits are the hash whose minimum wins the
// bin, b bits are what the bin stores (7 + 13 + 2 = 22 bits at the
// defaults, B = 128, b = 2) — so one 64-bit word serves about three
// elements instead of one. It appends B values of b bits; compare two such
// blocks of the same i with sketch.BinsJaccard(x, y, b, false), which
// corrects for the chance matches of b bits, (2^b·Q − 1)/(2^b − 1).
//
// Ties of the 13-bit hash are broken, as the paper suggests, by more bits
// of the element drawn only then: an element whose 13 bits do not exceed
// its bin's best so far also gets the full 64-bit element hash of
// SketchScale, and a bin keeps the least (13 bits, 64−13−b bits of that
// hash, b stored bits); the full hash is drawn about ln(elements per bin)
// times per bin. A bin no element reaches stores 0, like any value, so two
// sets whose bin is empty in both agree there (rare at L ≥ 4 elements per
// bin: e^−L). The stored bits are independent of the order, so a bin whose
// two winners differ agrees with probability exactly 2^−b.
//
// B = Bins() must be a power of two and b one of 1, 2, 4, 8, 16, 32 (else
// an error wrapping ErrOptions). No allocation beyond dst. It is reached
// from Go only (not a stored sketch id), like the single-scale SketchScale.
func (h *HMT) SketchScaleChunked(dst []uint64, fs []feature.Feature, i, b int) ([]uint64, error) {
	if h.kb&(h.kb-1) != 0 {
		return dst, fmt.Errorf("%w: chunked sketch needs a power-of-two number of bins, have %d", ErrOptions, h.kb)
	}
	switch b {
	case 1, 2, 4, 8, 16, 32:
	default:
		return dst, fmt.Errorf("%w: chunked sketch stores b = %d bits, want 1, 2, 4, 8, 16 or 32", ErrOptions, b)
	}
	bb := bits.TrailingZeros(uint(h.kb))
	base := len(dst)
	for range h.kb {
		dst = append(dst, Empty)
	}
	blk := dst[base:]
	chunkKey := rng.Mix64(rng.Hash(rng.Hash(h.rOPH, 0x63686e6b /* "chnk" */), uint64(int64(i))) + golden)
	ophKey := rng.Mix64(h.ophSeed(i) + golden)
	depKey := rng.Mix64(h.rDep + golden)
	indKey := h.scaleSeed(i)
	storeMask := uint64(1)<<uint(b) - 1
	ck := chunker{w: uint(bb+chunkTieBits+b) & 63, tieShift: uint(bb) & 63, storeShift: uint(bb+chunkTieBits) & 63,
		gShift: uint(chunkTieBits+b) & 63, ub: uint(b) & 63, binMask: uint64(h.kb - 1), storeMask: storeMask}
	for _, f := range fs {
		wt, ok := h.scaled(f.Weight, i)
		if !ok {
			continue
		}
		var thDep float64
		if !h.indep {
			thDep = unit(rng.Mix64(f.ID ^ depKey))
		}
		n := h.copies(f.ID, wt, thDep, indKey)
		if n == 0 {
			continue
		}
		ck.add(blk, f.ID, n, rng.Mix64(rng.Mix64(f.ID^chunkKey)), ophKey)
	}
	for j, v := range blk {
		if v == Empty {
			blk[j] = 0
		} else {
			blk[j] = v & storeMask
		}
	}
	return dst, nil
}

// chunker holds the layout of a chunk: w = log₂B + 13 + b bits (≤ 9 + 13 +
// 32 at MaxK), the bin in the low log₂B bits, then the tie hash, then the
// stored bits.
type chunker struct {
	w, tieShift, storeShift, gShift, ub uint
	binMask, storeMask                  uint64
}

// add lets the elements (a, 1 … n) contend for the bins of blk: element p
// takes chunk p of the stream m (chunks packed across its 64-bit words),
// and draws word p−1 of the full element stream (keyed by ophKey) only when
// its tie hash does not exceed its bin's best. It is kept out of line so
// that its loop keeps its values in registers.
//
//go:noinline
func (ck *chunker) add(blk []uint64, a, n, m, ophKey uint64) {
	const low = 64 - chunkTieBits // the tie hash's place in a bin word
	w := ck.w & 63
	tieShift, storeShift, gShift, ub := ck.tieShift&63, ck.storeShift&63, ck.gShift&63, ck.ub&63
	binMask, storeMask := ck.binMask, ck.storeMask
	var mFull uint64 // the full element stream, when first needed
	fullOK := false
	var buf uint64 // stream bits not yet used: nb of them
	nb := uint(0)
	wi := uint64(0)
	for p := uint64(1); p <= n; p++ {
		var c uint64
		if nb >= w {
			c = buf
			buf >>= w & 63
			nb -= w
		} else { // nb < w < 64
			wi++
			nw := rng.Mix64(m + wi*golden)
			c = buf | nw<<(nb&63)
			buf = nw >> ((w - nb) & 63)
			nb = 64 - (w - nb)
		}
		bin := c & binMask
		tie := c >> (tieShift & 63) & (1<<chunkTieBits - 1)
		cur := blk[bin]
		if tie > cur>>low {
			continue
		}
		if !fullOK {
			mFull, fullOK = rng.Mix64(rng.Mix64(a^ophKey)), true
		}
		g := rng.Mix64(mFull + p*golden)
		v := tie<<low | g>>(gShift&63)<<(ub&63) | c>>(storeShift&63)&storeMask
		if v == Empty {
			v-- // 2^−64: keep Empty for bins no element reached
		}
		if v < cur {
			blk[bin] = v
		}
	}
}
