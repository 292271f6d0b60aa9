package weighted

import (
	"math"
	"sync"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// ICWS is Ioffe's improved consistent weighted sampling (book chapter 5.2):
// for each feature and sample, five uniforms u₁, u₂, v₁, v₂, β from a stream
// keyed by the feature give r = −ln(v₁v₂), c = −ln(u₁u₂),
// t = ⌊ln S/r + β⌋, y = e^(r(t−β)), z = y·e^r and a = c/z; the feature with
// the least a wins and the sample is (x, t), equivalently (x, y). It is the
// standard baseline: exact in expectation, worst-case O(n·K) with three
// logarithms per (feature, sample).
//
// The zero value is not usable; build one with NewICWS. An ICWS is
// immutable and safe for concurrent use; Sketch and Samples allocate
// nothing in steady state.
type ICWS struct {
	k              int
	logw           bool
	seed, features uint64
	seedR, seedV   uint64
	pool           sync.Pool
}

type icwsScratch struct {
	a   []float64 // ln a of the best
	t   []int64
	y   []float64 // ln y
	idx []int32
}

// NewICWS returns an ICWS sampler. Only K, Seed and LogWeights are used.
func NewICWS(o Options) (*ICWS, error) {
	o = o.withDefaults()
	if err := o.validate(false); err != nil {
		return nil, err
	}
	c := &ICWS{k: o.K, logw: o.LogWeights, seed: o.Seed, features: o.Features,
		seedR: rng.Key(o.Seed, tagICWS, 1), seedV: rng.Key(o.Seed, tagICWS, 2)}
	c.pool.New = func() any {
		return &icwsScratch{a: make([]float64, c.k), t: make([]int64, c.k), y: make([]float64, c.k), idx: make([]int32, c.k)}
	}
	return c, nil
}

// K returns the number of samples.
func (c *ICWS) K() int { return c.k }

func (c *ICWS) run(fs []feature.Feature) *icwsScratch {
	sc := c.pool.Get().(*icwsScratch)
	inf := math.Inf(1)
	for j := range c.k {
		sc.a[j], sc.idx[j] = inf, -1
	}
	for i, ft := range fs {
		lnS, ok := lnWeight(ft.Weight, c.logw)
		if !ok {
			continue
		}
		m := rng.Mix64(rng.Hash(c.seedR, ft.ID))
		ctr := m
		for j := range c.k {
			ctr += golden
			u1 := unit(rng.Mix64(ctr))
			ctr += golden
			u2 := unit(rng.Mix64(ctr))
			ctr += golden
			v1 := unit(rng.Mix64(ctr))
			ctr += golden
			v2 := unit(rng.Mix64(ctr))
			ctr += golden
			b := unit(rng.Mix64(ctr))
			r := -math.Log(v1 * v2)
			t := math.Floor(lnS/r + b)
			lny := r * (t - b)
			// ln a = ln c − ln z, c = −ln(u₁u₂), ln z = ln y + r.
			la := math.Log(-math.Log(u1*u2)) - lny - r
			if la < sc.a[j] {
				sc.a[j], sc.t[j], sc.y[j], sc.idx[j] = la, int64(t), lny, int32(i)
			}
		}
	}
	return sc
}

// Sketch appends the K sample values of fs to dst: value j hashes sample
// j's (x, t); nothing is appended when fs has no positive weight. Feature IDs must
// be distinct.
func (c *ICWS) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	sc := c.run(fs)
	if sc.idx[0] < 0 { // no positive weight: no values
		c.pool.Put(sc)
		return dst
	}
	for j := range c.k {
		i := sc.idx[j]
		v := rng.Hash2(rng.Hash2(c.seedV, fs[i].ID, uint64(j)), uint64(sc.t[j]), 0)
		if v == Empty {
			v--
		}
		dst = append(dst, v)
	}
	c.pool.Put(sc)
	return dst
}

// Samples appends the K samples (x, y) of fs to dst (nothing when fs has no
// positive weight).
func (c *ICWS) Samples(dst []Sample, fs []feature.Feature) []Sample {
	sc := c.run(fs)
	for j := range c.k {
		if i := sc.idx[j]; i >= 0 {
			dst = append(dst, Sample{ID: fs[i].ID, Y: math.Exp(sc.y[j]), LogY: sc.y[j]})
		}
	}
	c.pool.Put(sc)
	return dst
}

// Replicated is the slow exact reference of MMT's introduction: a feature
// of integer weight w becomes w unit elements (x, 1) … (x, w), and each of K
// min-hash functions keeps the element of least hash. Its samples collide
// with probability exactly Σmin/Σmax for integer weights. Weights are
// truncated to integers (a weight below 1 is absent); LogWeights is
// ignored. Cost O(K·Σw).
//
// The zero value is not usable; build one with NewReplicated. It is
// immutable and safe for concurrent use.
type Replicated struct {
	k    int
	seed uint64
	sH   uint64
	sV   uint64
}

// NewReplicated returns the replication reference sampler. Only K and Seed
// are used.
func NewReplicated(o Options) (*Replicated, error) {
	o = o.withDefaults()
	if err := o.validate(false); err != nil {
		return nil, err
	}
	return &Replicated{k: o.K, seed: o.Seed, sH: rng.Key(o.Seed, tagRep, 1), sV: rng.Key(o.Seed, tagRep, 2)}, nil
}

// K returns the number of samples.
func (c *Replicated) K() int { return c.k }

// pick returns the feature index and copy number of sample j (−1 if none).
func (c *Replicated) pick(fs []feature.Feature, j int) (int, uint64) {
	best, bi, bc := Empty, -1, uint64(0)
	for i, ft := range fs {
		if !(ft.Weight >= 1) || math.IsInf(ft.Weight, 1) {
			continue
		}
		n := uint64(ft.Weight)
		m := rng.Mix64(rng.Hash2(c.sH, ft.ID, uint64(j)))
		for p := uint64(1); p <= n; p++ {
			if h := rng.Mix64(m + p*golden); h < best {
				best, bi, bc = h, i, p
			}
		}
	}
	return bi, bc
}

// Samples appends the K samples (x, i), i ∈ 1…⌊S(x)⌋, of fs to dst
// (nothing when no weight is at least 1).
func (c *Replicated) Samples(dst []Sample, fs []feature.Feature) []Sample {
	for j := range c.k {
		if bi, bc := c.pick(fs, j); bi >= 0 {
			dst = append(dst, Sample{ID: fs[bi].ID, Y: float64(bc), LogY: math.Log(float64(bc))})
		}
	}
	return dst
}

// Sketch appends the K sample values of fs to dst (nothing when no weight
// is at least 1).
func (c *Replicated) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	for j := range c.k {
		bi, bc := c.pick(fs, j)
		if bi < 0 { // no weight ≥ 1: no values
			return dst
		}
		v := rng.Hash2(rng.Hash2(c.sV, fs[bi].ID, uint64(j)), bc, 0)
		if v == Empty {
			v--
		}
		dst = append(dst, v)
	}
	return dst
}
