package weighted

import (
	"math"
	"math/bits"
	"sync"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// Labels separating the uses of randomness (rng.Key labels).
const (
	tagCWS  = 0x637773   // "cws"
	tagICWS = 0x69637773 // "icws"
	tagHMT  = 0x686d74   // "hmt"
	tagRep  = 0x726570   // "rep"
	tagCWSA = 0x63777361 // "cwsa": the section-3.5 samplers
)

// CWS is the consistent weighted sampler of Manasse, McSherry and Talwar
// (MMT sections 2 and 3): K independent sample functions, each returning a
// sample (x, y) with x chosen with probability S(x)/ΣS and y uniform on
// (0, S(x)], such that P(sample(S) = sample(T)) = Σmin/Σmax.
//
// Active indices of feature x are generated per interval (2^(k−1), 2^k]
// from (seed, x, k, sample) alone: a bit vector keyed by (x, block of 64
// intervals, sample) says which intervals are non-empty (3.3), and the
// mantissas of a non-empty interval are m₁ = 1 − U/2, m_{i+1} = m_i·U while
// above 1/2 (GenerateSamples conditioned on non-emptiness). β comes from a
// stream keyed by x only. The expected cost is O(n·K) cheap hash words plus
// O(K·ln n) inversions of cdf_z, independent of the weights.
//
// The zero value is not usable; build one with NewCWS. A CWS is immutable
// and safe for concurrent use; Sketch and Samples take scratch space from a
// pool and allocate nothing in steady state.
type CWS struct {
	k                          int
	logw                       bool
	dis                        Enhancement
	beta                       Beta
	seed, features             uint64
	seedU, seedB, seedM, seedV uint64
	seedE                      uint64 // β's remaining bits (section 3.5)
	pool                       sync.Pool
}

type cwsScratch struct {
	q   []float64 // best key ln(−ln h) per sample
	f   []float64 // e^q = f·2^x
	x   []int
	idx []int32
	ky  []int // y per sample when y is not deferred
	my  []float64
	g   []float64 // −log2 f − x per sample (section 3.5's quick test)
	hi  []int     // ⌊2g − 2e−6⌋ per sample (its group test)
	// The section-3.5 samplers. BetaOblivious, per group of 8 samples:
	// packed thresholds by block parity, the block each parity was packed
	// for and the stale groups; the group's words of interval bits (blocks
	// blk and blk+1) and of prefixes and its survivors, 4 words a group
	// (scanOblivious).
	rw    [2][]uint64
	rwBlk [2]int
	dirty [2][]uint64 // bit g: rw[b][g] is stale
	gw    []uint64
	inv   []invReq // the section-3.5 samplers' inversions left for settle
}

// Counts reports the work of one CWS run: Pairs (feature, sample) examined,
// ZExact evaluations of z's mantissa (section 3.4 avoids the others; for
// the exact β, the pairs whose full β is viable given z's exponent),
// Inversions of cdf_z (section 3.2 avoids the others) and BestChanges, the
// times a sample's best hash improved. BetaBits counts the random bits of β
// drawn (64 per pair for BetaExact; the prefix, plus 53 for a pair whose
// prefix did not rule it out, for the section-3.5 schemes) and BetaFull the
// pairs whose β was drawn in full beyond its prefix (section 3.5's "times
// we need to produce additional randomness", MMT Figure 2).
type Counts struct {
	Pairs, ZExact, Inversions, BestChanges int
	BetaBits, BetaFull                     int
}

// NewCWS returns a CWS sampler. Only K, Seed, LogWeights, Beta and Disable
// are used. With Beta set to BetaOblivious or BetaUnary (section 3.5), only
// the ApproxBeta bit of Disable is honoured; the other speed-ups are always
// on.
func NewCWS(o Options) (*CWS, error) {
	o = o.withDefaults()
	if err := o.validate(false); err != nil {
		return nil, err
	}
	c := &CWS{k: o.K, logw: o.LogWeights, dis: o.Disable &^ ApproxBeta, seed: o.Seed, features: o.Features,
		seedU: rng.Key(o.Seed, tagCWS, 1), seedB: rng.Key(o.Seed, tagCWS, 2),
		seedM: rng.Key(o.Seed, tagCWS, 3), seedV: rng.Key(o.Seed, tagCWS, 4)}
	if o.Beta != BetaExact {
		t := uint64(tagCWSA)<<8 | uint64(o.Beta)
		c.beta, c.dis = o.Beta, o.Disable&ApproxBeta
		c.seedU, c.seedB = rng.Key(o.Seed, t, 1), rng.Key(o.Seed, t, 2)
		c.seedM, c.seedV, c.seedE = rng.Key(o.Seed, t, 3), rng.Key(o.Seed, t, 4), rng.Key(o.Seed, t, 5)
	}
	c.pool.New = func() any {
		sc := &cwsScratch{q: make([]float64, c.k), f: make([]float64, c.k), x: make([]int, c.k),
			idx: make([]int32, c.k), ky: make([]int, c.k), my: make([]float64, c.k), g: make([]float64, c.k), hi: make([]int, c.k)}
		if c.beta != BetaExact {
			ng := (c.k + 7) / 8
			for b := range 2 {
				sc.rw[b], sc.dirty[b] = make([]uint64, ng), make([]uint64, (ng+63)/64)
			}
			sc.gw, sc.inv = make([]uint64, 4*ng), make([]invReq, 0, c.k)
		}
		return sc
	}
	return c, nil
}

// K returns the number of samples.
func (c *CWS) K() int { return c.k }

// Sketch appends the K sample values of fs to dst and returns the extended
// slice: value j is a 64-bit hash of sample j's (x, y); nothing is appended
// when fs has no positive weight. Feature IDs must be distinct; absent weights (see
// Options.LogWeights and split) are skipped.
func (c *CWS) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	sc := c.run(fs, nil)
	if sc.idx[0] < 0 { // no positive weight: no values
		c.pool.Put(sc)
		return dst
	}
	for j := range c.k {
		i := sc.idx[j]
		ky, my := c.yOf(sc, fs, i, j)
		dst = append(dst, c.value(fs[i].ID, j, ky, my))
	}
	c.pool.Put(sc)
	return dst
}

// Samples appends the K samples (x, y) of fs to dst. A sample function that
// saw no positive weight contributes nothing, so len grows by 0 or K.
func (c *CWS) Samples(dst []Sample, fs []feature.Feature) []Sample {
	sc := c.run(fs, nil)
	for j := range c.k {
		i := sc.idx[j]
		if i < 0 {
			continue
		}
		ky, my := c.yOf(sc, fs, i, j)
		dst = append(dst, Sample{ID: fs[i].ID, Y: math.Ldexp(my, ky), LogY: math.Log(my) + float64(ky)*math.Ln2})
	}
	c.pool.Put(sc)
	return dst
}

// Count runs the sampler on fs and reports its work (MMT Figure 1).
func (c *CWS) Count(fs []feature.Feature) Counts {
	var n Counts
	c.pool.Put(c.run(fs, &n))
	return n
}

func (c *CWS) yOf(sc *cwsScratch, fs []feature.Feature, i int32, j int) (int, float64) {
	if c.dis&DeferY != 0 {
		return sc.ky[j], sc.my[j]
	}
	k0, mS, _ := split(fs[i].Weight, c.logw)
	return c.y(fs[i].ID, k0, mS, j)
}

func (c *CWS) value(x uint64, j, ky int, my float64) uint64 {
	v := rng.Hash2(rng.Hash2(c.seedV, x, uint64(j)), uint64(int64(ky)), math.Float64bits(my))
	if v == Empty {
		v--
	}
	return v
}

func (c *CWS) run(fs []feature.Feature, n *Counts) *cwsScratch {
	if c.beta != BetaExact {
		return c.runApprox(fs, n)
	}
	sc := c.pool.Get().(*cwsScratch)
	inf := math.Inf(1)
	for j := range c.k {
		sc.q[j], sc.f[j], sc.x[j], sc.idx[j] = inf, 1, 1<<30, -1
	}
	avoid := c.dis&AvoidInversion == 0
	partial := avoid && c.dis&PartialZ == 0
	deferY := c.dis&DeferY == 0
	for i, ft := range fs {
		k0, mS, ok := split(ft.Weight, c.logw)
		if !ok {
			continue
		}
		x := ft.ID
		mu := rng.Mix64(rng.Hash(c.seedU, x))
		blk := (k0 + 1) >> 6
		pos := uint((k0 + 1) & 63)
		mb := rng.Mix64(rng.Hash2(c.seedB, x, uint64(int64(blk))))
		for j := range c.k {
			if n != nil {
				n.Pairs++
				n.BetaBits += 64
			}
			ctr := uint64(j+1) * golden
			u := unit(rng.Mix64(mu + ctr)) // u = 1 − β
			if partial {
				// z ≤ 2^k1 for the first non-empty interval k1 beyond S's
				// own (the remark of 3.4): rule x out if even that loses.
				var k1 int
				if w := rng.Mix64(mb+ctr) >> pos; w != 0 {
					k1 = k0 + 1 + bits.TrailingZeros64(w)
				} else {
					k1 = c.nextSet(x, (blk+1)<<6, j)
				}
				if !mayWin(u, scaleT(sc.f[j], 1, sc.x[j]+k1)) {
					continue
				}
			}
			if n != nil {
				n.ZExact++
			}
			kz, mz := c.z(x, k0, mS, j)
			var ky int
			var my float64
			if !deferY {
				ky, my = c.y(x, k0, mS, j) // without 3.1: y for every pair
			}
			if avoid && !mayWin(u, scaleT(sc.f[j], mz, sc.x[j]+kz)) {
				continue
			}
			if n != nil {
				n.Inversions++
			}
			q := math.Log(invertC(u)) - (math.Log(mz) + float64(kz)*math.Ln2)
			if q < sc.q[j] {
				if n != nil {
					n.BestChanges++
				}
				sc.q[j], sc.idx[j] = q, int32(i)
				sc.f[j], sc.x[j] = frexpE(q)
				sc.ky[j], sc.my[j] = ky, my
			}
		}
	}
	return sc
}

// bit reports whether interval (2^(k−1), 2^k] holds an active index of x
// for sample function j.
func (c *CWS) bit(x uint64, k, j int) bool {
	if c.beta != BetaExact {
		return c.word8(x, k>>3, j)>>uint(k&7)&1 != 0
	}
	return word(rng.Hash2(c.seedB, x, uint64(int64(k>>6))), j)>>uint(k&63)&1 != 0
}

// nextSet returns the least non-empty interval ≥ k.
func (c *CWS) nextSet(x uint64, k, j int) int {
	if c.beta != BetaExact {
		return c.nextSet8(x, k, j)
	}
	for {
		w := word(rng.Hash2(c.seedB, x, uint64(int64(k>>6))), j) >> uint(k&63)
		if w != 0 {
			return k + bits.TrailingZeros64(w)
		}
		k = (k>>6 + 1) << 6
	}
}

// prevSet returns the greatest non-empty interval ≤ k.
func (c *CWS) prevSet(x uint64, k, j int) int {
	if c.beta != BetaExact {
		return c.prevSet8(x, k, j)
	}
	for {
		w := word(rng.Hash2(c.seedB, x, uint64(int64(k>>6))), j) << uint(63-k&63)
		if w != 0 {
			return k - bits.LeadingZeros64(w)
		}
		k = k>>6<<6 - 1
	}
}

// mantissas starts GenerateSamples(x, k) for sample j, conditioned on the
// interval being non-empty: the largest active index is m·2^k.
func (c *CWS) mantissas(x uint64, k, j int) (rng.Stream, float64) {
	s := rng.New(rng.Hash2(rng.Hash(c.seedM, x), uint64(int64(k)), uint64(j)))
	return s, 1 - s.Float64()/2
}

// mantissasH is mantissas given hm = rng.Hash(c.seedM, x) (written out
// twice so that the exact sampler's path keeps its single call).
func (c *CWS) mantissasH(hm uint64, k, j int) (rng.Stream, float64) {
	s := rng.New(rng.Hash2(hm, uint64(int64(k)), uint64(j)))
	return s, 1 - s.Float64()/2
}

// z returns the least active index above S = mS·2^k0 as m·2^k.
func (c *CWS) z(x uint64, k0 int, mS float64, j int) (int, float64) {
	if c.bit(x, k0, j) {
		s, m := c.mantissas(x, k0, j)
		if m > mS {
			for {
				nm := m * s.Open01()
				if nm <= mS || nm <= 0.5 {
					return k0, m
				}
				m = nm
			}
		}
	}
	k := c.nextSet(x, k0+1, j)
	s, m := c.mantissas(x, k, j)
	for {
		nm := m * s.Open01()
		if nm <= 0.5 {
			return k, m
		}
		m = nm
	}
}

// y returns the greatest active index ≤ S = mS·2^k0 as m·2^k.
func (c *CWS) y(x uint64, k0 int, mS float64, j int) (int, float64) {
	if c.bit(x, k0, j) {
		s, m := c.mantissas(x, k0, j)
		for m > 0.5 {
			if m <= mS {
				return k0, m
			}
			m *= s.Open01()
		}
	}
	k := c.prevSet(x, k0-1, j)
	_, m := c.mantissas(x, k, j)
	return k, m
}
