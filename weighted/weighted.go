package weighted

import (
	"errors"
	"fmt"
	"math"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// Errors reported by the constructors and estimators.
var (
	ErrOptions      = errors.New("weighted: invalid options")
	ErrMismatch     = errors.New("weighted: sketches are not comparable")
	ErrSketchLength = errors.New("weighted: sketch has the wrong number of values")
)

// Empty is the value a sketch holds in a position no feature reached: every
// position of the sketch of an empty (or all-zero) weighted set, and an
// empty one-permutation bin of an HMT sketch (sketch.HMTEmpty).
const Empty = sketch.HMTEmpty

// Options configure every sampler of the package; fields a sampler does not
// use are ignored. The zero value is valid and selects the defaults.
type Options struct {
	// K is the number of samples (CWS, ICWS, Replicated) or of comparable
	// samples (HMT: K/(Scales−Tau) one-permutation bins per scale). The
	// default is 256.
	K int
	// Seed selects the family of sample functions; sketches are comparable
	// only when made with the same seed. The default is 0.
	Seed uint64
	// LogWeights says that every Feature.Weight holds the natural logarithm
	// of the weight rather than the weight, so weights far outside the
	// float64 range (e^±700 and beyond) can be sampled; −Inf is weight 0.
	// Logarithms must satisfy |ln w| ≤ 1e15. The default is false.
	LogWeights bool
	// Features is copied into the sketch header's Features field (a hash of
	// the feature configuration). The default is 0.
	Features uint64

	// Alpha is HMT's interestingness threshold α: similarities below it may
	// be reported as "below α". The default is 0.5.
	Alpha float64
	// Tau is HMT's τ ∈ [1, Scales): scales are powers of β = α^(1/τ). The
	// default is 1.
	Tau int
	// Scales is HMT's number t of scales per sketch, at most 63. The default
	// is 3.
	Scales int
	// L is HMT's redundancy: each scale's unweighted set has at least
	// L·K/(Scales−Tau) elements. The default is 4.
	L float64
	// Independent selects ReduceToUnwtd (a threshold h(r_i, a, ⌊w⌋) per
	// scale) instead of the default ReduceToUnwtdDep (one threshold h(r, a)
	// per feature shared by all scales). The default is false.
	Independent bool
	// BinaryBeta selects footnote 1 of HMT section 3.2: consecutive scales
	// differ by β = 2^(−1/m), m the least integer ≥ τ/log₂(1/α), instead of
	// α^(1/τ) (see sketch.HMTParams.BinaryBeta); scaling is then a
	// multiplication by one of m constants and an exponent shift. Two sets
	// whose total weights are within 1/α then share at least t − τ − 1
	// scales (t − τ with β = α^(1/τ)), since log_{1/β}(1/α) may exceed τ.
	// NewHMT fails when no such m exists (possible only for α < 1/2). The
	// default is false.
	BinaryBeta bool

	// Beta selects CWS's β scheme: BetaExact (sketch.CWS), or one of the
	// approximations of MMT section 3.5, BetaOblivious (sketch.CWSOblivious)
	// and BetaUnary (sketch.CWSUnary), which make other (equally
	// distributed) samples. The default is BetaExact.
	Beta Beta

	// Disable turns off CWS speed-ups of the paper's section 3, for
	// measuring what each buys; the samples are identical either way. The
	// default (0) enables all of them.
	Disable Enhancement
}

// Enhancement is a set of CWS speed-ups (MMT section 3) that can be disabled.
type Enhancement uint8

// The CWS speed-ups.
const (
	// AvoidInversion compares β against cdf_z(h) before inverting cdf_z
	// (eq. 7), so cdf_z is inverted only when the best sample changes.
	AvoidInversion Enhancement = 1 << iota
	// DeferY computes y only for the winning feature of each sample (3.1).
	DeferY
	// PartialZ rules a feature out from the exponent of z alone, taken from
	// the interval bit vector, before generating its mantissa (3.3, 3.4).
	PartialZ
	// ApproxBeta rules a pair out from the few bits of β that section 3.5
	// hands each sample, before drawing the rest (BetaOblivious, BetaUnary
	// only). Disabled, every β is drawn in full: the reference sampler.
	ApproxBeta
)

func (o Options) withDefaults() Options {
	if o.K == 0 {
		o.K = 256
	}
	if o.Alpha == 0 {
		o.Alpha = 0.5
	}
	if o.Tau == 0 {
		o.Tau = 1
	}
	if o.Scales == 0 {
		o.Scales = 3
	}
	if o.L == 0 {
		o.L = 4
	}
	return o
}

// validate reports every problem at once.
func (o Options) validate(hmt bool) error {
	var errs []error
	if o.Beta > BetaUnary {
		errs = append(errs, fmt.Errorf("%w: Beta = %d, want BetaExact, BetaOblivious or BetaUnary", ErrOptions, o.Beta))
	}
	if o.K < 1 || o.K > 1<<20 {
		errs = append(errs, fmt.Errorf("%w: K = %d, want 1 ≤ K ≤ 2^20", ErrOptions, o.K))
	}
	if hmt {
		if !(o.Alpha > 0 && o.Alpha < 1) {
			errs = append(errs, fmt.Errorf("%w: Alpha = %v, want 0 < Alpha < 1", ErrOptions, o.Alpha))
		}
		if o.Scales < 2 || o.Scales > 63 { // t is packed in 6 bits of the header
			errs = append(errs, fmt.Errorf("%w: Scales = %d, want 2 ≤ Scales ≤ 63", ErrOptions, o.Scales))
		}
		if o.Tau < 1 || o.Tau >= o.Scales {
			errs = append(errs, fmt.Errorf("%w: Tau = %d, want 1 ≤ Tau < Scales = %d", ErrOptions, o.Tau, o.Scales))
		}
		if !(o.L >= 1 && o.L <= 1e6) {
			errs = append(errs, fmt.Errorf("%w: L = %v, want 1 ≤ L ≤ 1e6", ErrOptions, o.L))
		}
	}
	return errors.Join(errs...)
}

// Sample is one consistent weighted sample (x, y): feature ID x and a
// positive value y ≤ S(x). Two sample functions' samples are equal exactly
// when both ID and y are equal. Y may overflow to +Inf or underflow to 0 for
// extreme weights; LogY = ln y is always accurate.
type Sample struct {
	ID   uint64
	Y    float64
	LogY float64
}

// Element is one element (ID, Copy) of the unweighted set that
// ReduceToUnwtd makes of a weighted one: copies 1…⌊w⌋ of every feature, and
// copy ⌊w⌋+1 with probability w − ⌊w⌋.
type Element struct {
	ID   uint64
	Copy uint64
}

// Jaccard returns the exact weighted Jaccard similarity Σmin/Σmax of two
// weighted sets with plain (not logarithmic) weights. IDs must be distinct
// within each set; non-positive weights count as absent. Two empty sets have
// similarity 1. It costs O((n+m) log(n+m)) and allocates a map.
func Jaccard(a, b []feature.Feature) float64 {
	wb := make(map[uint64]float64, len(b))
	for _, f := range b {
		if f.Weight > 0 {
			wb[f.ID] += f.Weight
		}
	}
	var num, den float64
	for _, f := range a {
		if !(f.Weight > 0) {
			continue
		}
		w2, ok := wb[f.ID]
		if ok {
			num += math.Min(f.Weight, w2)
			den += math.Max(f.Weight, w2)
			delete(wb, f.ID)
		} else {
			den += f.Weight
		}
	}
	for _, w := range wb {
		den += w
	}
	if den == 0 {
		return 1
	}
	return num / den
}

// golden is the increment of rng.Stream; word reproduces its words.
const golden = 0x9e3779b97f4a7c15

// word returns the j-th (0-based) word of rng.New(key) without stepping a
// stream: Mix64(Mix64(key) + (j+1)·golden).
func word(key uint64, j int) uint64 {
	return rng.Mix64(rng.Mix64(key) + uint64(j+1)*golden)
}

// unit maps a word to a uniform float64 in (0, 1).
func unit(h uint64) float64 { return rng.ToFloat(h) }

// pow2 returns 2^e, saturating to 0 and +Inf outside float64's range.
func pow2(e int) float64 {
	switch {
	case e >= -1022 && e <= 1023:
		return math.Float64frombits(uint64(e+1023) << 52)
	case e > 1023:
		return math.Inf(1)
	case e < -1074:
		return 0
	}
	return math.Ldexp(1, e)
}

// maxLogWeight bounds |ln w| for LogWeights, so interval numbers fit an int.
const maxLogWeight = 1e15

// split writes a weight as m·2^e with m ∈ (1/2, 1], the interval
// (2^(e−1), 2^e] holding it. ok is false for weights that are absent (zero,
// negative, NaN, infinite, or out of range as logarithms).
func split(w float64, logw bool) (e int, m float64, ok bool) {
	if logw {
		if !(w >= -maxLogWeight && w <= maxLogWeight) {
			return 0, 0, false
		}
		l2 := w * (1 / math.Ln2)
		c := math.Ceil(l2)
		return int(c), math.Exp2(l2 - c), true
	}
	if !(w > 0) || math.IsInf(w, 1) {
		return 0, 0, false
	}
	fr, ex := math.Frexp(w) // fr ∈ [1/2, 1)
	if fr == 0.5 {
		return ex - 1, 1, true
	}
	return ex, fr, true
}

// lnWeight returns ln w (ok false when w is absent).
func lnWeight(w float64, logw bool) (float64, bool) {
	if logw {
		if !(w >= -maxLogWeight && w <= maxLogWeight) {
			return 0, false
		}
		return w, true
	}
	if !(w > 0) || math.IsInf(w, 1) {
		return 0, false
	}
	return lnPos(w), true
}

// lnPos returns ln w for finite w > 0. math.Log on amd64 is wrong for
// subnormal inputs (math.Log(5e−324) gives −709.09, not −744.44), so those
// go through Frexp.
func lnPos(w float64) float64 {
	if w < 0x1p-1022 {
		fr, e := math.Frexp(w)
		return math.Log(fr) + float64(e)*math.Ln2
	}
	return math.Log(w)
}

// JaccardSorted is Jaccard for sets sorted by ID with distinct IDs: a merge
// in O(n+m) without allocation, for verifying many pairs.
func JaccardSorted(a, b []feature.Feature) float64 {
	var num, den float64
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].ID < b[j].ID):
			den += max(a[i].Weight, 0)
			i++
		case i == len(a) || b[j].ID < a[i].ID:
			den += max(b[j].Weight, 0)
			j++
		default:
			wa, wb := max(a[i].Weight, 0), max(b[j].Weight, 0)
			num += math.Min(wa, wb)
			den += math.Max(wa, wb)
			i++
			j++
		}
	}
	if den == 0 {
		return 1
	}
	return num / den
}
