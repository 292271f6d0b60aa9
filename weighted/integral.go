package weighted

import (
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// tagInt labels IntCWS's randomness (rng.Key label): "icnt".
const tagInt = 0x69636e74

// MaxCount is the largest count IntCWS samples: above 2^53 a float64
// weight no longer holds every integer.
const MaxCount = 1 << 53

// IntCWS is the integral-count consistent weighted sampler of Manasse,
// McSherry and Talwar ("Consistent Weighted Sampling", section 2.3,
// eqs. 5–6): a weight S(x) is a count, the weighted set is the multiset of
// pairs (x, c), c = 1…S(x), and each of the K sample functions returns one
// pair, uniform over the multiset's pairs, such that
// P(sample(S) = sample(T)) = Σmin(S,T)/Σmax(S,T) — the min-hash of the
// replicated set, without replicating.
//
// Index i ≥ 1 of feature x is active with probability 1/i, independently
// (index 1 always is); the actives in (2^(k−1), 2^k] are generated from
// (seed, x, k, sample) alone, from the top down: the greatest active index
// ≤ n is uniform on 1…n, since P(none in (m, n]) = Π(1 − 1/i) = m/n. Each
// interval is non-empty with probability exactly 1/2 and holds ln 2 actives
// on average, so the copy y (the greatest active ≤ S(x)) and z (the least
// active > S(x)) cost O(1) expected draws whatever the count. z is active
// with probability S(x)/(z(z−1)) (eq. 5), and the hash is drawn from
// cdf_z(a) = z·a^(z−1) − (z−1)·a^z (eq. 6, the distribution of the second
// largest of z uniforms) with a β that depends on x and the sample only;
// summed over z with eq. 5's weights it is a^S(x), the distribution of the
// largest of S(x) uniforms. The greatest hash wins.
//
// Weights are counts: a fractional weight is rounded up, and weights ≤ 0,
// NaN or above MaxCount are skipped as absent. Feature IDs must be
// distinct. The zero value is not usable; build one with NewIntCWS. An
// IntCWS is immutable and safe for concurrent use; Samples and Sketch take
// scratch space from a pool and allocate nothing in steady state. It is a
// library sampler: sample.New and the stored sketch ids do not offer it.
type IntCWS struct {
	k                          int
	seedU, seedM, seedV, seedC uint64
	pool                       sync.Pool
}

// IntSample is one sample of IntCWS: copy Copy ∈ 1…S(ID) of feature ID.
type IntSample struct {
	ID, Copy uint64
}

type intScratch struct {
	r   []float64 // −ln h of the best hash per sample (smaller wins)
	idx []int32
}

// NewIntCWS returns an IntCWS sampler. Only K and Seed are used;
// LogWeights is refused.
func NewIntCWS(o Options) (*IntCWS, error) {
	o = o.withDefaults()
	if err := o.validate(false); err != nil {
		return nil, err
	}
	if o.LogWeights {
		return nil, fmt.Errorf("%w: IntCWS takes counts, not LogWeights", ErrOptions)
	}
	c := &IntCWS{k: o.K, seedU: rng.Key(o.Seed, tagInt, 1), seedM: rng.Key(o.Seed, tagInt, 2),
		seedV: rng.Key(o.Seed, tagInt, 3), seedC: rng.Key(o.Seed, tagInt, 4)}
	c.pool.New = func() any {
		return &intScratch{r: make([]float64, c.k), idx: make([]int32, c.k)}
	}
	return c, nil
}

// K returns the number of samples.
func (c *IntCWS) K() int { return c.k }

// count returns the count of weight w (ok false when absent).
func count(w float64) (uint64, bool) {
	if !(w > 0 && w <= MaxCount) {
		return 0, false
	}
	return uint64(math.Ceil(w)), true
}

// Samples appends the K samples of fs to dst: nothing when fs has no
// positive weight, else K samples.
func (c *IntCWS) Samples(dst []IntSample, fs []feature.Feature) []IntSample {
	sc := c.run(fs)
	if sc.idx[0] >= 0 {
		for j := range c.k {
			x := fs[sc.idx[j]]
			s, _ := count(x.Weight)
			dst = append(dst, IntSample{ID: x.ID, Copy: c.y(x.ID, s, j)})
		}
	}
	c.pool.Put(sc)
	return dst
}

// Sketch appends the K sample values of fs to dst: value j is a 64-bit hash
// of sample j's (ID, Copy), never Empty; nothing is appended when fs has no
// positive weight.
func (c *IntCWS) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	sc := c.run(fs)
	if sc.idx[0] >= 0 {
		for j := range c.k {
			x := fs[sc.idx[j]]
			s, _ := count(x.Weight)
			v := rng.Hash2(rng.Hash2(c.seedV, x.ID, uint64(j)), c.y(x.ID, s, j), 0)
			if v == Empty {
				v--
			}
			dst = append(dst, v)
		}
	}
	c.pool.Put(sc)
	return dst
}

func (c *IntCWS) run(fs []feature.Feature) *intScratch {
	sc := c.pool.Get().(*intScratch)
	for j := range c.k {
		sc.r[j], sc.idx[j] = math.Inf(1), -1
	}
	for i, ft := range fs {
		s, ok := count(ft.Weight)
		if !ok {
			continue
		}
		hu := rng.Hash(c.seedU, ft.ID)
		for j := range c.k {
			u := rng.ToFloat(rng.Hash(hu, uint64(j))) // u = 1 − β
			z := c.z(ft.ID, s, j)
			// Eq. 7: h > h* iff β > cdf_z(h*) iff u < G_z(z·r*). The
			// margin errs towards inverting; the key comparison decides.
			if r := sc.r[j]; r < math.Inf(1) && u >= intG(z*r*(1+1e-9), z) {
				continue
			}
			if r := intInvert(u, z) / z; r < sc.r[j] {
				sc.r[j], sc.idx[j] = r, int32(i)
			}
		}
	}
	return sc
}

// interval starts the actives of x in (2^(k−1), 2^k] for sample j.
func (c *IntCWS) interval(x uint64, k, j int) rng.Stream {
	return rng.New(rng.Hash2(rng.Hash(c.seedM, x), uint64(k), uint64(j)))
}

// next returns the greatest active index below a (a ≥ 2): uniform on
// 1…a−1.
func next(s *rng.Stream, a uint64) uint64 { return 1 + s.Intn(a-1) }

// y returns the greatest active index ≤ n: the sampled copy.
func (c *IntCWS) y(x, n uint64, j int) uint64 {
	k := bits.Len64(n - 1) // n ∈ (2^(k−1), 2^k]
	for ; k > 0; k-- {
		top, lo := uint64(1)<<k, uint64(1)<<(k-1)
		s := c.interval(x, k, j)
		for a := next(&s, top+1); a > lo; a = next(&s, a) {
			if a <= n {
				return a
			}
		}
		n = lo
	}
	return 1 // index 1 is always active
}

// z returns the least active index above n, as a float64 (exact up to
// 2^53; beyond, the relative error is below 2^−53, and from 2^64 on the
// interval's actives are drawn as reals, MMT's GenerateSamples: the
// difference lies below float64's resolution).
func (c *IntCWS) z(x, n uint64, j int) float64 {
	k := bits.Len64(n - 1)
	best := uint64(0)
	if k > 0 {
		lo := uint64(1) << (k - 1)
		s := c.interval(x, k, j)
		for a := next(&s, uint64(1)<<k+1); a > lo && a > n; a = next(&s, a) {
			best = a
		}
	}
	if best != 0 {
		return float64(best)
	}
	for k++; k < 64; k++ {
		lo := uint64(1) << (k - 1)
		s := c.interval(x, k, j)
		for a := next(&s, uint64(1)<<k+1); a > lo; a = next(&s, a) {
			best = a
		}
		if best != 0 {
			return float64(best)
		}
	}
	for ; ; k++ {
		s := c.interval(x, k, j)
		m := s.Open01()
		if m <= 0.5 {
			continue
		}
		for {
			nm := m * s.Open01()
			if nm <= 0.5 {
				return math.Ldexp(m, k)
			}
			m = nm
		}
	}
}

// The hash. With a = e^(−t/z), eq. 6 reads cdf_z = e^(−t)·(1 + z·(e^(t/z) − 1)),
// so with u = 1 − β the hash solves G_z(t) = u for
// G_z(t) = 1 − cdf_z = C(t) − e^(−t)·z·(e^(t/z) − 1 − t/z), C the continuous
// case's Gamma(2, 1) distribution function (cdfC); the subtracted term is
// at most C(t)/z-ish, so for z ≥ 2 nothing cancels catastrophically. As
// z → ∞ G_z → C: the integral case tends to the continuous one. The key is
// −ln h = t/z; the least key is the greatest hash.

// em returns e^a − 1 − a accurately for a ≥ 0.
func em(a float64) float64 {
	if a < 0.01 {
		return a * a * (1.0/2 + a*(1.0/6+a*(1.0/24+a*(1.0/120+a*(1.0/720+a/5040)))))
	}
	return math.Expm1(a) - a
}

// intG returns G_z(t) = 1 − cdf_z(e^(−t/z)), increasing from 0 to 1 in t.
func intG(t, z float64) float64 {
	if math.IsInf(t, 1) {
		return 1
	}
	return cdfC(t) - math.Exp(-t)*z*em(t/z)
}

// intInvert returns t with G_z(t) = u, u ∈ (0, 1), by bisection (MMT
// 2.1.2's binary search): relative precision 1e−15, at most 200 steps.
func intInvert(u, z float64) float64 {
	lo, hi := 0.0, 1.0
	for intG(hi, z) < u {
		lo, hi = hi, 2*hi
	}
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi || hi-lo <= 1e-15*hi {
			break
		}
		if intG(mid, z) < u {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}
