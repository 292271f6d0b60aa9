package weighted

import (
	"math"
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// Beta selects how CWS draws the β of each (feature, sample) pair (MMT
// section 3.5, "Parallel Sampling").
type Beta uint8

// The β schemes. BetaExact is the sampler of sections 2–3.4 (sketch.CWS,
// frozen by golden vectors). The two others are the approximations of
// section 3.5 (sketch.CWSOblivious, sketch.CWSUnary): a feature's random
// bits are parcelled out to its K samples a few at a time, a pair is ruled
// out from the few bits alone when even the most favourable β they allow
// loses (eq. 7), and the rest of β is drawn only for the pairs that survive.
// The interval bit vector of 3.3 is parcelled out alike, one byte (8
// intervals) per sample from a word shared by 8 samples, so the exponent of
// z costs about a byte per pair too.
const (
	// BetaExact draws 64 bits for every β (the default).
	BetaExact Beta = iota
	// BetaOblivious gives every sample 8 bits of β, 16 samples sharing a
	// 128-bit draw: β ∈ [p/256, (p+1)/256) for the byte p. At most 255/256
	// of the pairs can be ruled out, since p = 255 is always viable.
	BetaOblivious
	// BetaUnary reads a feature's random bits as a sequence of unary
	// numbers, one per sample: a run of m ones ended by a zero says
	// β ∈ [1−2^−m, 1−2^−(m+1)). Two bits per sample on average, and as many
	// as a β close to 1 needs.
	BetaUnary
)

// prefixBits is the resolution of BetaOblivious's prefix.
const prefixBits = 8

// obliviousLim[p] is (log2 ulo + 1)/2 − 1e−6 for the least u = 1 − β =
// (255−p)/256 that prefix p allows (−Inf for p = 255: never ruled out).
var obliviousLim = func() (l [256]float64) {
	for p := range l {
		l[p] = (math.Log2(float64(255-p)/256)+1)/2 - 1e-6
	}
	return l
}()

// obliviousC[p] is an integer c ≥ −2·(log2 ulo + 1)/2 for the least u that
// prefix p allows (ulo as in obliviousLim; 1,000 for p = 255, never ruled
// out): the group test of runApprox in integers.
var obliviousC = func() (c [256]int16) {
	for p := range c {
		if p == 255 {
			c[p] = 1000
			continue
		}
		c[p] = int16(math.Ceil(-(math.Log2(float64(255-p)/256) + 1)))
	}
	return c
}()

// groupOblivious is the quick test of runApprox in integers for a group of
// up to 8 samples, their bytes of interval bits in zw (block blk) and zn
// (block blk+1), of prefixes in pw: pair jj is ruled out when
// 2·(k1 − 8·blk) + c ≤ min(hi[jj] − 16·blk, 119), c = obliviousC[p], that
// is k1 + c/2 ≤ h − 1e−6, which implies the float quick test. k1 − 8·blk is
// the trailing zeros of the pair's byte of zw under mask (the intervals
// above the weight's) followed by its byte of zn; when both are empty the
// pair survives, and so does a pair whose prefix is 255. It returns the
// survivors, bit jj for pair jj (bits beyond the group may be set).
//
// The eight pairs are tested at once, a byte each (SWAR): rw holds the
// bytes r = max(min(hi − 16·blk, 119), −1) + 1 ∈ [0, 120] (obliviousR), and
// pair jj survives when 2·tz + c ≥ r, tz the trailing zeros of its 16 bits
// and c the leading ones of its prefix byte (obliviousC for p < 255). No
// sum exceeds 2·15 + 8 + 16 < 128, so bytes never carry into each other.
// zn is read only where a byte of zw&mask is empty, and must be 0 when none is.
func groupOblivious(zw, zn, pw, mask, rw uint64) uint {
	const (
		lo7 = 0x7f7f7f7f7f7f7f7f
		hb  = 0x8080808080808080
		one = 0x0101010101010101
	)
	m := zw & mask
	v := twoTZ(m) // 2·tz for the non-empty bytes of m, 0 for the empty ones
	empty := ^((m&lo7 + lo7) | m) & hb
	// c: y = ~p smeared right is 2^(8−c) − 1 per byte; c = 8 − popcount(y).
	y := ^pw
	y |= y >> 1 & lo7
	y |= y >> 2 & 0x3f3f3f3f3f3f3f3f
	y |= y >> 4 & 0x0f0f0f0f0f0f0f0f
	y -= y >> 1 & 0x5555555555555555
	y = y&0x3333333333333333 + y>>2&0x3333333333333333
	y = (y + y>>4) & 0x0f0f0f0f0f0f0f0f
	c := 8*one - y // c = 8 only for p = 255
	surv := c << 4 & hb
	if empty != 0 {
		full := empty >> 7 * 0xff
		v |= (twoTZ(zn) + 16*one) & full
		surv |= empty &^ ((zn&lo7 + lo7) | zn)
	}
	surv |= ((v + c) | hb) - rw
	surv &= hb
	return uint(surv >> 7 * 0x0102040810204080 >> 56)
}

// twoTZ returns, per byte of m, twice the trailing zeros of the byte (0 for
// an empty byte), from the lowest set bit of each byte.
func twoTZ(m uint64) uint64 {
	const hb = 0x8080808080808080
	nm := ^m
	b := m & ((nm&^hb + 0x0101010101010101) ^ nm&hb) // lowest set bit per byte
	t1 := (b&0xaaaaaaaaaaaaaaaa + 0x7e7e7e7e7e7e7e7e) & hb
	t2 := (b&0xcccccccccccccccc + 0x7c7c7c7c7c7c7c7c) & hb
	t4 := (b&0xf0f0f0f0f0f0f0f0 + 0x7070707070707070) & hb
	return t1>>6 | t2>>5 | t4>>4
}

// obliviousR packs the thresholds of groupOblivious for the samples of hi
// (at most 8) and block blk: byte jj is max(min(hi[jj] − 16·blk, 119), −1)
// + 1. The bytes beyond len(hi) are 0.
func obliviousR(hi []int, blk int) (rw uint64) {
	base := blk << 4
	for jj, h := range hi {
		r := max(min(h-base, 119), -1) + 1
		rw |= uint64(r) << (8 * uint(jj&7))
	}
	return rw
}

// unaryBits is a feature's stream of unary prefixes (BetaUnary): word wi
// of the stream keyed by hu, of which left bits remain in cur.
type unaryBits struct {
	cur, wi, hu uint64
	left        int
}

// slow reads the next prefix, also when it runs past the current word.
//
//go:noinline
func (s *unaryBits) slow() int {
	m := 0
	for {
		o := bits.TrailingZeros64(^s.cur)
		if o < s.left {
			s.cur = s.cur >> (uint(o) & 63) >> 1
			s.left -= o + 1
			return m + o
		}
		m += s.left
		s.wi++
		s.cur, s.left = rng.Mix64(s.hu+s.wi*golden), 64
	}
}

// decode reads len(ms) prefixes into ms (the reference, without the group
// test).
func (s *unaryBits) decode(ms []int) {
	for jj := range ms {
		if o := bits.TrailingZeros64(^s.cur); o < s.left {
			ms[jj] = o
			s.cur = s.cur >> (uint(o) & 63) >> 1 // o < left ≤ 64
			s.left -= o + 1
		} else {
			ms[jj] = s.slow()
		}
	}
}

// group is groupOblivious for BetaUnary, c = m, the run of ones of each
// pair's prefix read from the stream and stored in ms.
//
//go:noinline
func (s *unaryBits) group(zw, zn, mask uint64, hi []int, base int, ms *[8]int) (surv uint) {
	cur, left := s.cur, s.left
	for jj, hj := range hi {
		var m int
		if o := bits.TrailingZeros64(^cur); o < left {
			m = o
			cur = cur >> (uint(o) & 63) >> 1 // o < left ≤ 64
			left -= o + 1
		} else {
			s.cur, s.left = cur, left
			m = s.slow()
			cur, left = s.cur, s.left
		}
		ms[jj&7] = m
		tz := bits.TrailingZeros64(zw&mask | zn&0xff<<8 | 1<<60)
		if 2*tz+m > min(hj-base, 119) {
			surv |= 1 << uint(jj&7)
		}
		zw >>= 8
		zn >>= 8
	}
	s.cur, s.left = cur, left
	return surv
}

// runApprox is run for BetaOblivious and BetaUnary. It makes the same
// samples whether or not ApproxBeta is disabled: a pair is ruled out from
// β's prefix only when the least u = 1 − β the prefix allows already fails
// eq. 7's test, and mayWin is monotone in u, so the full β would fail too.
//
// Samples go in groups of 8, the samples that share a word of interval bits
// (and, for BetaOblivious, a word of prefixes). Once a sample's best hash is
// good, almost every pair is ruled out by its prefix, so each group is first
// tested in integers, without floating point and out of line
// (groupOblivious, unaryBits.group); only the pairs that test leaves go
// through the per-pair loop. The integer test implies the loop's own quick
// test, and the random bits read are the same, so the samples do not change:
// only the cost of the pairs that cannot win does.
func (c *CWS) runApprox(fs []feature.Feature, n *Counts) *cwsScratch {
	sc := c.pool.Get().(*cwsScratch)
	inf := math.Inf(1)
	for j := range c.k {
		sc.q[j], sc.f[j], sc.x[j], sc.idx[j] = inf, 1, 1<<30, -1
	}
	// h[j] = −log2 f − x for the best key e^q = f·2^x of sample j; |x| ≤
	// 2^30 (frexpE), so h is within 2.4e−7 of exact, inside the margin.
	// hi[j] = ⌊2h[j] − 2e−6⌋, the integer threshold of the group test.
	h, hi := sc.g[:c.k], sc.hi[:c.k]
	for j := range h {
		h[j] = -(1 << 30)
		hi[j] = int(math.Floor(2*h[j] - 2e-6))
	}
	// rw[2g+b] holds obliviousR of group g for block rwb[2g+b], b that
	// block's parity; a change of hi[j] voids its group's two entries.
	rw, rwb := sc.rw, sc.rwb
	for i := range rwb {
		rwb[i] = math.MinInt
	}
	approx := c.dis&ApproxBeta == 0
	unary := c.beta == BetaUnary
	var ms [8]int // unary: the group's prefixes (runs of ones)
	for i, ft := range fs {
		k0, mS, ok := split(ft.Weight, c.logw)
		if !ok {
			continue
		}
		x := ft.ID
		hu := rng.Hash(c.seedU, x) // β's prefixes
		he := rng.Hash(c.seedE, x) // β's remaining bits
		blk := (k0 + 1) >> 3
		pos := uint((k0 + 1) & 7)
		hiMask := uint64(0xff << pos & 0xff) // the bits ≥ pos of a byte
		hb := rng.Hash2(c.seedB, x, uint64(int64(blk)))
		var hb1 uint64 // the key of block blk+1, drawn when first needed
		hb1OK := false
		rep := hiMask * 0x0101010101010101
		var bw0, bw1 uint64
		ub := unaryBits{hu: hu} // unary: the feature's stream of prefixes
		for g0 := 0; g0 < c.k; g0 += 8 {
			g1 := min(g0+8, c.k)
			zw := rng.Mix64(hb + uint64(g0>>3+1)*golden)
			var pw uint64 // oblivious: the group's word of prefixes
			if !unary {
				if g0&15 == 0 {
					g := uint64(g0 >> 4)
					bw0, bw1 = rng.Mix64(hu+(2*g+1)*golden), rng.Mix64(hu+(2*g+2)*golden)
				}
				pw = bw0
				if g0&15 >= 8 {
					pw = bw1
				}
			}
			// The quick test in integers, for the whole group; surv has bit
			// j−g0 set for the pairs it does not rule out.
			// zn is the group's word of block blk+1, drawn when a byte of
			// zw has no bit at or above pos (k1 is then in block blk+1).
			// Without ApproxBeta every pair survives (the unary prefixes are
			// still read, by the group test).
			var zn uint64
			znOK := false
			if zm := zw & rep; approx && (zm-0x0101010101010101)&^zm&0x8080808080808080 != 0 {
				if !hb1OK {
					hb1, hb1OK = rng.Hash2(c.seedB, x, uint64(int64(blk+1))), true
				}
				zn, znOK = rng.Mix64(hb1+uint64(g0>>3+1)*golden), true
			}
			surv := uint(1)<<(g1-g0) - 1
			if unary && !approx {
				ub.decode(ms[:g1-g0])
			} else if unary {
				surv = ub.group(zw, zn, hiMask, hi[g0:g1], blk<<4, &ms)
			} else if approx {
				// The group's packed thresholds for this block, cached
				// by the block's parity (a document's weights mostly
				// fall in two neighbouring blocks).
				ci := g0>>2 | blk&1
				if rwb[ci] != blk {
					rwb[ci], rw[ci] = blk, obliviousR(hi[g0:g1], blk)
				}
				surv &= groupOblivious(zw, zn, pw, rep, rw[ci])
			}
			if n != nil {
				n.Pairs += g1 - g0
				if unary {
					for _, m := range ms[:g1-g0] {
						n.BetaBits += m + 1
					}
				} else {
					n.BetaBits += prefixBits * (g1 - g0)
				}
			}
			for ; surv != 0; surv &= surv - 1 {
				j := g0 + bits.TrailingZeros(surv)
				var k1 int
				if w := (zw >> (8 * uint(j&7)) & 0xff) >> pos; w != 0 {
					k1 = k0 + 1 + bits.TrailingZeros64(w)
				} else {
					if !znOK { // drawn by the group test when needed
						if !hb1OK {
							hb1, hb1OK = rng.Hash2(c.seedB, x, uint64(int64(blk+1))), true
						}
						zn, znOK = rng.Mix64(hb1+uint64(g0>>3+1)*golden), true
					}
					if w := zn >> (8 * uint(j&7)) & 0xff; w != 0 {
						k1 = (blk+1)<<3 + bits.TrailingZeros64(w)
					} else {
						k1 = c.nextSet8(x, (blk+2)<<3, j)
					}
				}
				// β's prefix and the least u it allows.
				var p, m int
				if unary {
					m = ms[j-g0]
				} else {
					p = int(pw >> (8 * uint(j&7)) & 0xff)
				}
				if approx {
					// Quick test: t = f·2^(x+k1) and mayWin is false when
					// ulo ≥ t'²/2 for t' = t(1+1e−9) (C(t) ≤ t²/2), that is
					// k1 ≤ (log2 ulo + 1)/2 − log2 f − x − 1.5e−9; lim holds
					// the first term less a margin of 1e−6 for rounding.
					var lim float64
					if unary {
						lim = -0.5*float64(m) - 1e-6
					} else {
						lim = obliviousLim[p]
					}
					if float64(k1) <= lim+h[j] {
						continue // k1 was further than the byte's bound
					}
					var ulo float64
					if unary {
						ulo = pow2(-(m + 1))
					} else {
						ulo = float64(255-p) * (1.0 / 256)
					}
					if !mayWin(ulo, scaleT(sc.f[j], 1, sc.x[j]+k1)) {
						continue
					}
				}
				t := scaleT(sc.f[j], 1, sc.x[j]+k1)
				// The rest of β: 53 more bits, u strictly inside the prefix's
				// interval.
				r := unit(rng.Mix64(he + uint64(j+1)*golden))
				var u float64
				if unary {
					u = pow2(-(m + 1)) * (2 - r)
				} else {
					u = (float64(256-p) - r) * (1.0 / 256)
				}
				if n != nil {
					n.BetaBits += 53
					n.BetaFull++
				}
				if !mayWin(u, t) {
					continue
				}
				if n != nil {
					n.ZExact++
				}
				kz, mz := c.z(x, k0, mS, j)
				if !mayWin(u, scaleT(sc.f[j], mz, sc.x[j]+kz)) {
					continue
				}
				if n != nil {
					n.Inversions++
				}
				q := math.Log(invertCTol(u, 1e-13)) - (math.Log(mz) + float64(kz)*math.Ln2)
				if q < sc.q[j] {
					if n != nil {
						n.BestChanges++
					}
					sc.q[j], sc.idx[j] = q, int32(i)
					sc.f[j], sc.x[j] = frexpE(q)
					h[j] = -math.Log2(sc.f[j]) - float64(sc.x[j])
					hi[j] = int(math.Floor(2*h[j] - 2e-6))
					rwb[j>>3<<1], rwb[j>>3<<1|1] = math.MinInt, math.MinInt
				}
			}
		}
	}
	return sc
}

// word8 returns sample j's byte of the interval bit vector of block b
// (intervals 8b … 8b+7, bit i for interval 8b+i): byte j mod 8 of a word
// shared by samples 8⌊j/8⌋ … 8⌊j/8⌋+7.
func (c *CWS) word8(x uint64, b, j int) uint64 {
	return rng.Mix64(rng.Hash2(c.seedB, x, uint64(int64(b)))+uint64(j>>3+1)*golden) >> (8 * uint(j&7)) & 0xff
}

// nextSet8 is nextSet for the byte layout of the section-3.5 samplers.
func (c *CWS) nextSet8(x uint64, k, j int) int {
	for {
		if w := c.word8(x, k>>3, j) >> uint(k&7); w != 0 {
			return k + bits.TrailingZeros64(w)
		}
		k = (k>>3 + 1) << 3
	}
}

// prevSet8 is prevSet for the byte layout.
func (c *CWS) prevSet8(x uint64, k, j int) int {
	for {
		if w := uint8(c.word8(x, k>>3, j) << uint(7-k&7)); w != 0 {
			return k - bits.LeadingZeros8(w)
		}
		k = k>>3<<3 - 1
	}
}
