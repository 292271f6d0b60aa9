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

// obliviousR packs the thresholds of scanOblivious's group test for the
// samples of hi (at most 8) and block blk: byte jj is
// max(min(hi[jj] − 16·blk, 119), −1) + 1. The bytes beyond len(hi) are 0.
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

// group is scanOblivious's group test for BetaUnary, one pair at a time
// (the prefixes have no fixed place in the stream): pair jj is ruled out
// when 2·tz + m ≤ min(hi[jj] − base, 119), m the run of ones of its prefix,
// read from the stream and stored in ms.
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
// tested in integers, without floating point (scanOblivious,
// unaryBits.group); only the pairs that test leaves go through the per-pair
// code (pair). The integer test implies pair's own quick test, and the random
// bits read are the same, so the samples do not change: only the cost of the
// pairs that cannot win does. For BetaOblivious the group tests of a
// feature run first, all 8 pairs of a group at once and in a loop that calls
// nothing (scanOblivious), since every call makes Go spill and reload the
// loop's registers; the survivors follow. The inversions of cdf_z the
// survivors need wait for the end of the feature (settle), where they run
// four at a time.
func (c *CWS) runApprox(fs []feature.Feature, n *Counts) *cwsScratch {
	sc := c.pool.Get().(*cwsScratch)
	inf := math.Inf(1)
	for j := range c.k {
		sc.q[j], sc.f[j], sc.x[j], sc.idx[j] = inf, 1, 1<<30, -1
	}
	// h[j] = −log2 f − x for the best key e^q = f·2^x of sample j (settle
	// takes −q/ln 2 when |q| < 2^20); |x| ≤ 2^30 (frexpE), so h is within
	// 2.4e−7 of exact, inside the margin. hi[j] = ⌊2h[j] − 2e−6⌋, the
	// integer threshold of the group test.
	h, hi := sc.g[:c.k], sc.hi[:c.k]
	for j := range h {
		h[j] = -(1 << 30)
		hi[j] = int(math.Floor(2*h[j] - 2e-6))
	}
	// rw[b][g] holds obliviousR of group g for block rwBlk[b], b that
	// block's parity, except for the groups whose bit is set in dirty[b]:
	// a change of hi[j] sets its group's two bits.
	sc.rwBlk = [2]int{math.MinInt, math.MinInt}
	approx := c.dis&ApproxBeta == 0
	unary := c.beta == BetaUnary
	var ms [8]int // unary: the group's prefixes (runs of ones)
	var f apxFeature
	for i, ft := range fs {
		k0, mS, ok := split(ft.Weight, c.logw)
		if !ok {
			continue
		}
		x := ft.ID
		hu := rng.Hash(c.seedU, x) // β's prefixes
		blk := (k0 + 1) >> 3
		pos := uint((k0 + 1) & 7)
		hiMask := uint64(0xff << pos & 0xff) // the bits ≥ pos of a byte
		rep := hiMask * 0x0101010101010101
		f = apxFeature{x: x, i: int32(i), k0: k0, mS: mS, blk: blk, pos: pos,
			he: rng.Hash(c.seedE, x), // β's remaining bits
			hb: rng.Hash2(c.seedB, x, uint64(int64(blk))), hb1: rng.Hash2(c.seedB, x, uint64(int64(blk+1)))}
		if n != nil {
			n.Pairs += c.k
			if !unary {
				n.BetaBits += prefixBits * c.k
			}
		}
		if !unary && approx {
			par := blk & 1
			rw, dirty := sc.rw[par], sc.dirty[par]
			if sc.rwBlk[par] != blk {
				sc.rwBlk[par] = blk
				for g := range rw {
					rw[g] = obliviousR(hi[g<<3:min(g<<3+8, c.k)], blk)
				}
				clear(dirty)
			} else {
				for wi, d := range dirty {
					for ; d != 0; d &= d - 1 {
						g := wi<<6 | bits.TrailingZeros64(d)
						rw[g] = obliviousR(hi[g<<3:min(g<<3+8, c.k)], blk)
					}
					dirty[wi] = 0
				}
			}
			scanOblivious(sc.gw, f.hb, f.hb1, hu, rep, rw)
			gw := sc.gw[:4*len(rw)]
			if r := c.k & 7; r != 0 { // the last group is partial
				gw[len(gw)-1] &= 1<<r - 1
			}
			for o := 0; o+3 < len(gw); o += 4 {
				if gw[o+3] == 0 {
					continue
				}
				zw, zn, pw := gw[o], gw[o+1], gw[o+2]
				for surv := uint(gw[o+3]); surv != 0; surv &= surv - 1 {
					jj := uint(bits.TrailingZeros(surv))
					c.pair(sc, &f, n, o<<1|int(jj), zw>>(8*jj)&0xff, zn>>(8*jj)&0xff, int(pw>>(8*jj)&0xff), 0, true, false)
				}
			}
			if len(sc.inv) > 0 {
				c.settle(sc, f.i, n)
			}
			continue
		}
		ub := unaryBits{hu: hu} // unary: the feature's stream of prefixes
		for g0 := 0; g0 < c.k; g0 += 8 {
			g1 := min(g0+8, c.k)
			gi := uint64(g0>>3 + 1)
			zw := rng.Mix64(f.hb + gi*golden)
			zn := rng.Mix64(f.hb1 + gi*golden) // the group's word of block blk+1
			var pw uint64                      // oblivious: the group's word of prefixes
			if !unary {
				pw = rng.Mix64(hu + gi*golden)
			}
			// The quick test in integers, for the whole group; surv has bit
			// j−g0 set for the pairs it does not rule out. Without
			// ApproxBeta every pair survives (the unary prefixes are still
			// read, by the group test).
			surv := uint(1)<<(g1-g0) - 1
			if unary && !approx {
				ub.decode(ms[:g1-g0])
			} else if unary {
				surv = ub.group(zw, zn, hiMask, hi[g0:g1], blk<<4, &ms)
			}
			if n != nil && unary {
				for _, m := range ms[:g1-g0] {
					n.BetaBits += m + 1
				}
			}
			for ; surv != 0; surv &= surv - 1 {
				jj := uint(bits.TrailingZeros(surv))
				c.pair(sc, &f, n, g0+int(jj), zw>>(8*jj)&0xff, zn>>(8*jj)&0xff, int(pw>>(8*jj)&0xff), ms[jj], approx, unary)
			}
		}
		if len(sc.inv) > 0 {
			c.settle(sc, f.i, n)
		}
	}
	return sc
}

// apxFeature is what runApprox's per-pair code needs of the current feature:
// its ID and index, S = mS·2^k0, the block blk of interval k0+1 and its bit
// pos, and the keys of β's remaining bits (he), of the interval bits of
// blocks blk and blk+1 (hb, hb1) and of the mantissas (hm, drawn when hmOK
// is false).
type apxFeature struct {
	x           uint64
	i           int32
	k0, blk     int
	pos         uint
	mS          float64
	he, hb, hb1 uint64
	hm          uint64
	hmOK        bool
}

// scanOblivious is the quick test of runApprox in integers for every group
// of 8 samples of a feature, its interval bits keyed by hb (block blk) and
// hb1 (block blk+1), its prefixes by hu, mask rep the intervals above the
// weight's (the bits ≥ pos of every byte), rw the groups' thresholds for
// blk (obliviousR). It writes group g's words of interval bits and of
// prefixes and its survivors, bit jj for pair jj, to gw[4g:4g+4] (zw, zn,
// pw, survivors); in a last partial group, pairs beyond K may be set.
//
// Pair jj of a group is ruled out when 2·(k1 − 8·blk) + c ≤
// min(hi[jj] − 16·blk, 119), c = obliviousC[p], that is k1 + c/2 ≤
// h − 1e−6, which implies the float quick test of pair. k1 − 8·blk is tz,
// the trailing zeros of the pair's byte of zw&rep followed by its byte of
// zn; when both are empty the pair survives, and so does a pair whose
// prefix is 255. The eight pairs are tested at once, a byte each (SWAR):
// with r = max(min(hi − 16·blk, 119), −1) + 1 ∈ [0, 120] the byte of rw,
// pair jj survives when 2·tz + c ≥ r, c being the leading ones of the
// prefix byte (obliviousC below 255). No byte's sum exceeds 2·15 + 8 < 128,
// so bytes never carry into each other. The loop calls nothing and keeps
// few values live: in Go a call, or too many values, spills the loop's
// registers to the stack.
func scanOblivious(gw []uint64, hb, hb1, hu, rep uint64, rw []uint64) {
	const (
		lo7 = 0x7f7f7f7f7f7f7f7f
		hbt = 0x8080808080808080
		one = 0x0101010101010101
	)
	gw = gw[:4*len(rw)]
	// Two loops, so that few values are live at once: the words, then the
	// tests.
	gi := uint64(0)
	for g := range rw {
		w := gw[4*g : 4*g+4 : 4*g+4]
		gi += golden
		w[0], w[1], w[2] = rng.Mix64(hb+gi), rng.Mix64(hb1+gi), rng.Mix64(hu+gi)
	}
	for g, r := range rw {
		w := gw[4*g : 4*g+4 : 4*g+4]
		m := w[0] & rep
		empty := ^((m&lo7 + lo7) | m) & hbt // bit 7 of the empty bytes of m
		// x: m's byte, or zn's where m's is empty (k1 in block blk+1);
		// where x's is empty too, the pair survives (forced).
		x := m | w[1]&(empty>>7*0xff)
		forced := ^((x&lo7 + lo7) | x) & hbt
		// b: the lowest set bit of each byte of x, 0x80 where x is
		// empty, so that b − 1 (tz ones) never borrows.
		nx := ^x
		b := x&((nx&^hbt+one)^nx&hbt) | forced
		t := b - one
		// a: the leading ones of each prefix byte (c of them; all 8 only
		// for p = 255, which survives).
		a := w[2]
		a &= a>>1 | hbt
		a &= a>>2 | 0xc0c0c0c0c0c0c0c0
		a &= a>>4 | 0xf0f0f0f0f0f0f0f0
		forced |= a << 7
		// v = 2·popcount(t) + popcount(a) + 16 where x is zn's byte, that
		// is 2·tz + c: popcounts by nibble, then by byte.
		t -= t >> 1 & 0x5555555555555555
		t = t&0x3333333333333333 + t>>2&0x3333333333333333
		a -= a >> 1 & 0x5555555555555555
		a = a&0x3333333333333333 + a>>2&0x3333333333333333
		v := 2*t + a // ≤ 12 per nibble
		v = v&0x0f0f0f0f0f0f0f0f + v>>4&0x0f0f0f0f0f0f0f0f + empty>>3
		surv := (forced | ((v | hbt) - r)) & hbt
		w[3] = surv >> 7 * 0x0102040810204080 >> 56
	}

}

// pair finishes the pair of the current feature f and sample j that the
// group test left: zb and znb are j's bytes of interval bits of blocks blk
// and blk+1, p its oblivious prefix byte or m its unary run of ones. With
// approx it rules the pair out from the prefix when it can; then it draws
// the rest of β and, if the pair may win, z and the key.
func (c *CWS) pair(sc *cwsScratch, f *apxFeature, n *Counts, j int, zb, znb uint64, p, m int, approx, unary bool) {
	var k1 int
	if w := zb >> f.pos; w != 0 {
		k1 = f.k0 + 1 + bits.TrailingZeros64(w)
	} else if znb != 0 {
		k1 = (f.blk+1)<<3 + bits.TrailingZeros64(znb)
	} else {
		k1 = c.nextSet8(f.x, (f.blk+2)<<3, j)
	}
	t := scaleT(sc.f[j], 1, sc.x[j]+k1)
	cl := -1.0 // C(t(1+1e−9)) once computed by mayWinC, else −1
	if approx {
		// Quick test: t = f·2^(x+k1) and mayWin is false when
		// ulo ≥ t'²/2 for t' = t(1+1e−9) (C(t) ≤ t²/2), that is
		// k1 ≤ (log2 ulo + 1)/2 − log2 f − x − 1.5e−9; lim holds
		// the first term less a margin of 1e−6 for rounding.
		var lim, ulo float64
		if unary {
			lim = -0.5*float64(m) - 1e-6
		} else {
			lim = obliviousLim[p]
		}
		if float64(k1) <= lim+sc.g[j] {
			return // k1 was further than the byte's bound
		}
		if unary {
			ulo = pow2(-(m + 1))
		} else {
			ulo = float64(255-p) * (1.0 / 256)
		}
		var win bool
		if win, cl = mayWinC(ulo, t, -1); !win {
			return
		}
	}
	// The rest of β: 53 more bits, u strictly inside the prefix's interval.
	r := unit(rng.Mix64(f.he + uint64(j+1)*golden))
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
	if win, _ := mayWinC(u, t, cl); !win {
		return
	}
	if n != nil {
		n.ZExact++
	}
	if !f.hmOK {
		f.hm, f.hmOK = rng.Hash(c.seedM, f.x), true
	}
	kz, mz := c.zApprox(f, j, k1, zb)
	if !mayWin(u, scaleT(sc.f[j], mz, sc.x[j]+kz)) {
		return
	}
	if n != nil {
		n.Inversions++
	}
	// The inversion and the key comparison wait for settle, with the
	// feature's other inversions.
	sc.inv = append(sc.inv, invReq{u: u, mz: mz, j: int32(j), kz: int32(kz)})
}

// invReq is an inversion of cdf_z that pair leaves to settle: the key of
// sample j is ln(C^(−1)(u)) − ln(mz·2^kz).
type invReq struct {
	u, mz float64
	j, kz int32
}

// settle makes the inversions pair left for feature i (index i) and keeps
// the keys that beat their sample's best. The samples of one feature are
// distinct, so the order does not matter; the inversions run four at a
// time (invertCTolN: the same values as invertCTol, whose long chains of
// dependent operations then overlap).
func (c *CWS) settle(sc *cwsScratch, i int32, n *Counts) {
	reqs := sc.inv
	var us, ss [4]float64
	for len(reqs) > 0 {
		b := reqs[:min(4, len(reqs))]
		reqs = reqs[len(b):]
		for l, r := range b {
			us[l] = r.u
		}
		invertCTolN(us[:len(b)], ss[:len(b)], 1e-13)
		for l, r := range b {
			j := int(r.j)
			q := math.Log(ss[l]) - (math.Log(r.mz) + float64(r.kz)*math.Ln2)
			if q >= sc.q[j] {
				continue
			}
			if n != nil {
				n.BestChanges++
			}
			sc.q[j], sc.idx[j] = q, i
			sc.f[j], sc.x[j] = frexpE(q)
			if math.Abs(q) < 1<<20 {
				// −log2 e^q, within 1e−9 of −log2 f − x, far inside the
				// quick tests' margin of 1e−6 (and cheaper).
				sc.g[j] = -q * (1 / math.Ln2)
			} else {
				sc.g[j] = -math.Log2(sc.f[j]) - float64(sc.x[j])
			}
			sc.hi[j] = int(math.Floor(2*sc.g[j] - 2e-6))
			sc.dirty[0][j>>9] |= 1 << uint(j>>3&63)
			sc.dirty[1][j>>9] |= 1 << uint(j>>3&63)
		}
	}
	sc.inv = sc.inv[:0]
}

// mayWinC is mayWin(u, t) that also returns C(t(1+1e−9)) when it computed
// it, else −1; given such a value as cl (≥ 0) it does not compute it again.
// Both pair tests of runApprox share t, so C is evaluated once.
func mayWinC(u, t, cl float64) (bool, float64) {
	t *= 1 + 1e-9
	if t >= 40 {
		return true, cl
	}
	if u >= 0.5*t*t {
		return false, cl
	}
	if cl < 0 {
		cl = cdfC(t)
	}
	return u < cl, cl
}

// zApprox is z for the section-3.5 samplers at the pair's own feature: the
// first non-empty interval k1 ≥ k0+1 is already known, as are the
// interval bits zb of block blk, which hold interval k0 unless pos = 0, and
// the mantissas' key f.hm. It returns what z returns.
func (c *CWS) zApprox(f *apxFeature, j, k1 int, zb uint64) (int, float64) {
	var set bool
	if f.pos != 0 {
		set = zb>>(f.pos-1)&1 != 0
	} else {
		set = c.bit(f.x, f.k0, j)
	}
	if set {
		s, m := c.mantissasH(f.hm, f.k0, j)
		if m > f.mS {
			for {
				nm := m * s.Open01()
				if nm <= f.mS || nm <= 0.5 {
					return f.k0, m
				}
				m = nm
			}
		}
	}
	s, m := c.mantissasH(f.hm, k1, j)
	for {
		nm := m * s.Open01()
		if nm <= 0.5 {
			return k1, m
		}
		m = nm
	}
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
