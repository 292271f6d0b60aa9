package weighted

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// HMT is the Haeupler–Manasse–Talwar sketch ("Consistent Weighted Sampling
// Made Fast, Small, and Easy", section 3.2, Algorithm 3.3). With
// β = α^(1/τ) and |w|₁ the total weight, it picks the first scale
// s = ⌈log_{1/β}(L·K / ((t−τ)|w|₁))⌉ and, for each of the t scales
// i = s … s+t−1, rounds β^(−i)·w consistently to an unweighted set of at
// least L·K/(t−τ) expected elements (ReduceToUnwtdDep by default,
// ReduceToUnwtd with Options.Independent) and sketches it by one-permutation
// hashing into K/(t−τ) bins, keeping the least element hash of each bin.
// Two sets whose total weights are within a factor 1/α share at least t−τ
// scales, hence K comparable bins; sketch.Jaccard (Algorithm 3.4, also
// reached through EstimateJaccard and Estimate) averages the per-scale
// estimates.
//
// Sketch layout (len = 2 + t·B, B = ⌈K/(t−τ)⌉, and Header.K = len):
//
//	[0]        the first scale s, as int64
//	[1]        math.Float64bits(log₂ |w|₁)
//	[2+r·B+b]  bin b of scale s+r: the least 64-bit hash of the elements
//	           (a, p) of the rounded set at scale s+r that fall in bin b,
//	           or Empty
//
// An element's hash depends on (seed, scale number, a, p) only, so bins of
// equal scale numbers are comparable across sketches whatever their s. The
// cost is n·t weight scalings plus one hash per element: with the defaults
// about n + 7·L·K hash evaluations instead of ICWS's 5·n·K, whatever the
// scale of the weights.
//
// The zero value is not usable; build one with NewHMT. An HMT is immutable
// and safe for concurrent use; Sketch allocates nothing beyond dst.
type HMT struct {
	k, kb, t, tau int
	alpha, l      float64
	lnInvBeta     float64 // ln(1/β)
	log2InvBeta   float64
	pow2e         int // β = 2^−pow2e when > 0
	binM          int // β = 2^(−1/binM) when > 1 (Options.BinaryBeta)
	binFrac       []float64
	binary        bool
	target        float64
	indep, logw   bool
	seed          uint64
	features      uint64
	rDep          uint64
	rInd, rOPH    uint64
	hdr           sketch.Header
}

// Quantization of the parameters recorded in Header.Params.
const (
	alphaQ = 1 << 24
	lQ     = 16
)

// NewHMT returns an HMT sketcher. It uses K, Seed, LogWeights, Alpha, Tau,
// Scales, L and Independent; Alpha is rounded to a multiple of 2^−24 and L
// to a multiple of 1/16 so that they fit the sketch header.
func NewHMT(o Options) (*HMT, error) {
	o = o.withDefaults()
	if err := o.validate(true); err != nil {
		return nil, err
	}
	if o.L > 4095 {
		return nil, fmt.Errorf("%w: L = %v, want ≤ 4095", ErrOptions, o.L)
	}
	alpha := math.Round(o.Alpha*alphaQ) / alphaQ
	l := math.Round(o.L*lQ) / lQ
	if err := (sketch.HMTParams{Alpha: alpha, Tau: o.Tau, Scales: o.Scales, L: l}).Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err) // e.g. Alpha rounds to 0 or 1
	}
	hp := sketch.HMTParams{Alpha: alpha, Tau: o.Tau, Scales: o.Scales, L: l, BinaryBeta: o.BinaryBeta}
	if err := hp.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err) // no binary β for this α, τ
	}
	h := &HMT{k: o.K, t: o.Scales, tau: o.Tau, alpha: alpha, l: l, indep: o.Independent,
		logw: o.LogWeights, seed: o.Seed, features: o.Features, binary: o.BinaryBeta}
	h.kb = (o.K + h.t - h.tau - 1) / (h.t - h.tau)
	h.log2InvBeta = hp.Log2InvBeta()
	h.lnInvBeta = h.log2InvBeta * math.Ln2
	if !o.BinaryBeta {
		h.lnInvBeta = -math.Log(alpha) / float64(h.tau)
	}
	if e := h.log2InvBeta; e == math.Trunc(e) && e >= 1 && e <= 64 {
		h.pow2e = int(e)
	}
	if m := hp.BinaryBetaM(); o.BinaryBeta && m > 1 {
		h.binM = m
		h.binFrac = make([]float64, m)
		for r := range m {
			h.binFrac[r] = math.Exp2(float64(r) / float64(m))
		}
	}
	h.target = h.l * float64(h.k) / float64(h.t-h.tau)
	h.rDep = rng.Key(o.Seed, tagHMT, 1)
	h.rInd = rng.Key(o.Seed, tagHMT, 2)
	h.rOPH = rng.Key(o.Seed, tagHMT, 3)
	h.hdr = h.header()
	return h, nil
}

// Len returns the number of values of a non-empty sketch: 2 + t·B.
func (h *HMT) Len() int { return 2 + h.t*h.kb }

// Bins returns B, the number of one-permutation bins per scale.
func (h *HMT) Bins() int { return h.kb }

// Alpha returns the interestingness threshold α as recorded in the header.
func (h *HMT) Alpha() float64 { return h.alpha }

// totalLog2 returns log₂ of the total weight of fs (−Inf if none).
func totalLog2(fs []feature.Feature, logw bool) float64 {
	if logw {
		mx := math.Inf(-1)
		for _, f := range fs {
			if l, ok := lnWeight(f.Weight, true); ok && l > mx {
				mx = l
			}
		}
		if math.IsInf(mx, -1) {
			return mx
		}
		var s float64
		for _, f := range fs {
			if l, ok := lnWeight(f.Weight, true); ok {
				s += math.Exp(l - mx)
			}
		}
		return (mx + math.Log(s)) / math.Ln2
	}
	var s float64
	for _, f := range fs {
		if f.Weight > 0 && !math.IsInf(f.Weight, 1) {
			s += f.Weight
		}
	}
	if s == 0 {
		return math.Inf(-1)
	}
	if !math.IsInf(s, 1) && s >= 0x1p-900 {
		return math.Log2(s)
	}
	// Rescale by a power of two near the largest weight: exact, no overflow.
	var mx float64
	for _, f := range fs {
		if f.Weight > mx && !math.IsInf(f.Weight, 1) {
			mx = f.Weight
		}
	}
	_, e := math.Frexp(mx)
	s = 0
	for _, f := range fs {
		if f.Weight > 0 && !math.IsInf(f.Weight, 1) {
			s += math.Ldexp(f.Weight, -e)
		}
	}
	return math.Log2(s) + float64(e)
}

// firstScale returns s = ⌈log_{1/β}(L·K/((t−τ)·|w|₁))⌉ (Algorithm 3.3 line 2).
func (h *HMT) firstScale(log2W float64) int {
	return int(math.Ceil((math.Log2(h.target) - log2W) / h.log2InvBeta))
}

// scaled returns β^(−i)·w for a feature (ok false when absent).
func (h *HMT) scaled(w float64, i int) (float64, bool) {
	if h.logw {
		l, ok := lnWeight(w, true)
		return math.Exp(l + float64(i)*h.lnInvBeta), ok
	}
	if !(w > 0) || math.IsInf(w, 1) {
		return 0, false
	}
	if h.pow2e > 0 {
		return math.Ldexp(w, i*h.pow2e), true
	}
	if h.binM > 0 { // β^(−i) = 2^(q + r/m), i = q·m + r, 0 ≤ r < m
		q, r := i/h.binM, i%h.binM
		if r < 0 {
			q, r = q-1, r+h.binM
		}
		return math.Ldexp(w*h.binFrac[r], q), true
	}
	return math.Exp(lnPos(w) + float64(i)*h.lnInvBeta), true
}

// copies rounds a scaled weight w for feature a: ⌊w⌋, plus one when the
// consistent threshold falls below the fractional part. The threshold is
// thDep (ReduceToUnwtdDep), or h(indKey, a, ⌊w⌋) when Independent, where
// indKey is the scale's h.scaleSeed(i), hoisted by the callers.
func (h *HMT) copies(a uint64, w, thDep float64, indKey uint64) uint64 {
	if w >= 1<<40 {
		w = 1 << 40
	}
	fl := math.Floor(w)
	j := uint64(fl)
	th := thDep
	if h.indep {
		th = thresholdInd(indKey, a, j)
	}
	if th < w-fl {
		j++
	}
	return j
}

func (h *HMT) scaleSeed(i int) uint64 { return rng.Hash(h.rInd, uint64(int64(i))) }
func (h *HMT) ophSeed(i int) uint64   { return rng.Hash(h.rOPH, uint64(int64(i))) }

// thresholdInd is h(r, a, j) of ReduceToUnwtd; thresholdDep is h(r, a) of
// ReduceToUnwtdDep.
func thresholdInd(r, a, j uint64) float64 { return unit(rng.Hash2(r, a, j)) }
func thresholdDep(r, a uint64) float64    { return unit(rng.Hash(r, a)) }

// elemHash is the one-permutation hash of element (a, p) at a scale whose
// OPH seed is r: word p−1 of the stream keyed rng.Hash(r, a).
func elemHash(r, a, p uint64) uint64 {
	g := word(rng.Hash(r, a), int(p-1))
	if g == Empty {
		g--
	}
	return g
}

// Sketch appends the HMT sketch of fs to dst (layout in the type comment);
// it appends nothing when fs has no positive weight. Feature IDs must be
// distinct.
func (h *HMT) Sketch(dst []uint64, fs []feature.Feature) []uint64 {
	log2W := totalLog2(fs, h.logw)
	if math.IsInf(log2W, -1) || math.IsNaN(log2W) {
		return dst
	}
	s := h.firstScale(log2W)
	base := len(dst)
	dst = append(dst, uint64(int64(s)), math.Float64bits(log2W))
	for range h.t * h.kb {
		dst = append(dst, Empty)
	}
	bins := dst[base+2:]
	kb := uint64(h.kb)
	// Per-scale keys, hoisted: rng.Hash(r, a) = Mix64(a ^ Mix64(r+golden)).
	var ophKey, indKey [64]uint64
	for r := range h.t {
		ophKey[r] = rng.Mix64(h.ophSeed(s+r) + golden)
		indKey[r] = h.scaleSeed(s + r)
	}
	depKey := rng.Mix64(h.rDep + golden)
	for _, f := range fs {
		a := f.ID
		var thDep float64
		if !h.indep {
			thDep = unit(rng.Mix64(a ^ depKey))
		}
		for r := range h.t {
			w, ok := h.scaled(f.Weight, s+r)
			if !ok {
				break
			}
			// addElems, written out: this is the hot loop and the call
			// cost ~5% CPU (TestSketchScaleIsBlock keeps the two equal).
			if w >= 1<<40 {
				w = 1 << 40
			}
			fl := math.Floor(w)
			n := uint64(fl)
			th := thDep
			if h.indep {
				th = thresholdInd(indKey[r], a, n)
			}
			if th < w-fl {
				n++
			}
			if n == 0 {
				continue
			}
			blk := bins[r*h.kb : (r+1)*h.kb]
			m := rng.Mix64(rng.Mix64(a ^ ophKey[r]))
			for p := uint64(1); p <= n; p++ {
				g := rng.Mix64(m + p*golden)
				if g == Empty {
					g--
				}
				b, _ := bits.Mul64(g, kb)
				if g < blk[b] {
					blk[b] = g
				}
			}
		}
	}
	return dst
}

// addElems rounds the scaled weight w of feature a (threshold thDep, or
// h(indKey, a, ⌊w⌋) when Independent) and lets its elements (a, 1 … j)
// contend for the bins of blk: one permutation hashing of Algorithm 3.3
// lines 6–7.
func (h *HMT) addElems(blk []uint64, a uint64, w, thDep float64, indKey, ophKey, kb uint64) {
	n := h.copies(a, w, thDep, indKey)
	if n == 0 {
		return
	}
	m := rng.Mix64(rng.Mix64(a ^ ophKey))
	for p := uint64(1); p <= n; p++ {
		g := rng.Mix64(m + p*golden)
		if g == Empty {
			g--
		}
		b, _ := bits.Mul64(g, kb)
		if g < blk[b] {
			blk[b] = g
		}
	}
}

// SketchScale appends to dst the B = Bins() one-permutation bins of scale
// number i alone (Algorithm 3.3 lines 5–7 for one i: scale β^(−i)·w, round,
// sketch), the same values as the block of scale i in any Sketch that
// holds it. It is the paper's single-scale variant (section 5, "a single
// scaling version … so that we could estimate Jaccard for all pairs"): two
// sets sketched at the same i always compare, by sketch.BinsJaccard, with
// expected elements β^(−i)·|w|₁. Empty bins hold Empty. It appends B values
// even when fs has no positive weight; no allocation beyond dst.
func (h *HMT) SketchScale(dst []uint64, fs []feature.Feature, i int) []uint64 {
	base := len(dst)
	for range h.kb {
		dst = append(dst, Empty)
	}
	blk := dst[base:]
	ophKey := rng.Mix64(h.ophSeed(i) + golden)
	indKey := h.scaleSeed(i)
	depKey := rng.Mix64(h.rDep + golden)
	for _, f := range fs {
		w, ok := h.scaled(f.Weight, i)
		if !ok {
			continue
		}
		var thDep float64
		if !h.indep {
			thDep = unit(rng.Mix64(f.ID ^ depKey))
		}
		h.addElems(blk, f.ID, w, thDep, indKey, ophKey, uint64(h.kb))
	}
	return dst
}

// Scale returns the first scale s of fs's sketch and log₂ of its total
// weight (s is meaningless when fs has no positive weight: log2W = −Inf).
func (h *HMT) Scale(fs []feature.Feature) (s int, log2W float64) {
	log2W = totalLog2(fs, h.logw)
	if math.IsInf(log2W, -1) {
		return 0, log2W
	}
	return h.firstScale(log2W), log2W
}

// Reduce appends to dst the unweighted set that Sketch makes of fs at scale
// number i (ReduceToUnwtd or ReduceToUnwtdDep of β^(−i)·w with the sketch's
// randomness): the set whose one-permutation sketch is the block of scale i.
// It is for tests and for measuring the error of rounding alone.
func (h *HMT) Reduce(dst []Element, fs []feature.Feature, i int) []Element {
	indKey := h.scaleSeed(i)
	for _, f := range fs {
		w, ok := h.scaled(f.Weight, i)
		if !ok {
			continue
		}
		n := h.copies(f.ID, w, thresholdDep(h.rDep, f.ID), indKey)
		for p := uint64(1); p <= n; p++ {
			dst = append(dst, Element{ID: f.ID, Copy: p})
		}
	}
	return dst
}

// ReduceToUnwtd appends to dst the unweighted set of HMT Algorithm 3.1 for
// the weights of fs taken as they are: copies (a, 1) … (a, ⌊w⌋) of each
// feature and (a, ⌊w⌋+1) when h(seed, a, ⌊w⌋) < w − ⌊w⌋, with
// h(r, a, j) = rng.ToFloat(rng.Hash2(r, a, j)). Plain weights only;
// absent weights are skipped. Cost O(n + |w|₁).
func ReduceToUnwtd(dst []Element, fs []feature.Feature, seed uint64) []Element {
	return reduce(dst, fs, func(a, j uint64) float64 { return thresholdInd(seed, a, j) })
}

// ReduceToUnwtdDep is ReduceToUnwtd with the threshold h(seed, a) =
// rng.ToFloat(rng.Hash(seed, a)) of Algorithm 3.2, independent of ⌊w⌋.
func ReduceToUnwtdDep(dst []Element, fs []feature.Feature, seed uint64) []Element {
	return reduce(dst, fs, func(a, _ uint64) float64 { return thresholdDep(seed, a) })
}

func reduce(dst []Element, fs []feature.Feature, th func(a, j uint64) float64) []Element {
	for _, f := range fs {
		w := f.Weight
		if !(w > 0) || math.IsInf(w, 1) {
			continue
		}
		fl := math.Floor(w)
		n := uint64(fl)
		if th(f.ID, n) < w-fl {
			n++
		}
		for p := uint64(1); p <= n; p++ {
			dst = append(dst, Element{ID: f.ID, Copy: p})
		}
	}
	return dst
}
