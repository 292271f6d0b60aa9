package sketch

import (
	"fmt"
	"math"

	"github.com/neardup/neardup/internal/rng"
)

// HMTOptions choose how JaccardHMT turns two HMT sketches into an estimate
// (Haeupler–Manasse–Talwar, "Consistent Weighted Sampling Made Fast, Small,
// and Easy", Algorithm 3.4 and section 3.3). The zero value is what Jaccard
// uses: the total-weight ratio rule and the plain average.
type HMTOptions struct {
	// AsWritten follows Algorithm 3.4 to the letter: "Similarity < α" only
	// when the two sketches share no scale number (line 2), otherwise the
	// average over the common scales, whatever the ratio of the total
	// weights. With more scales than the defaults (larger t and τ, section
	// 3.3) this estimates similarities in [α², α) too. Without it, a
	// total-weight ratio below α answers Below at once (a shortcut the
	// paper's "Observe that if w1(U)/w2(U) ∉ [α, 1/α] …" allows).
	AsWritten bool
	// Weighted combines the scales' estimates by inverse variance (section
	// 3.3, last paragraph): scale i's variance is modelled as the one-
	// permutation sampling variance θ(1−θ)/m_i of its m_i compared bins
	// (corrected for b-bit chance matches) plus the rounding variance
	// J(1−J)/W_i, W_i the larger scaled total weight at scale i (the
	// reduction's variance shrinks as the scaled weight grows); θ and J
	// are the plain average's. StdErr is then sqrt(1/Σ 1/v_i). Without
	// it, J is the plain mean and StdErr counts sampling variance only.
	Weighted bool
}

// JaccardHMT is Jaccard for two HMT or HMTDep sketches (full, b-bit or ½-bit)
// with the estimator chosen by o; Jaccard(a, b) equals JaccardHMT(a, b,
// HMTOptions{}). Per common scale it calls UnwtdSimilarity (BinsJaccard's
// count): full values give matches/(B − bins empty in both); b-bit values
// give the chance-corrected (2^b·Q − 1)/(2^b − 1) over all B bins (an empty
// bin cannot be told apart: the paper's L keeps them rare, e^(−L) of the
// bins); ½-bit (XOR-pair) values estimate J² per scale, and J is the square
// root of the combined J². Errors as Jaccard's; other algorithms give
// ErrUnsupported. Cost O(len(Values)), no allocation.
func JaccardHMT(a, b *Sketch, o HMTOptions) (Estimate, error) {
	if err := a.Header.Check(b.Header); err != nil {
		return Estimate{}, err
	}
	if alg := a.Header.Algorithm; alg != HMT && alg != HMTDep {
		return Estimate{}, fmt.Errorf("%w: %v is not an HMT algorithm", ErrUnsupported, alg)
	}
	if err := a.Validate(); err != nil {
		return Estimate{}, err
	}
	if err := b.Validate(); err != nil {
		return Estimate{}, err
	}
	p, bins, _ := a.Header.HMT()
	return hmtJaccard(a, b, p, bins, o), nil
}

// hmtJaccard is Algorithm 3.4 (EstimateJaccard) for two valid HMT sketches
// with bins one-permutation bins per scale (before any XOR pairing):
//
//   - both empty: J = 1; one empty: Below with J = 0 (the bound below);
//   - the ratio r = min/max of the total weights (2^−|log₂W_a − log₂W_b|)
//     bounds the weighted Jaccard from above (Σmin ≤ min W, Σmax ≥ max W);
//     Below with J = r, StdErr = 0 when the sketches share no scale number
//     (line 2), and also when r < α unless o.AsWritten;
//   - otherwise, for every scale number i held by both — block i − s_a of a
//     against block i − s_b of b, never position against position — the
//     per-scale estimate q_i (see JaccardHMT) is combined over the scales
//     with at least one compared bin, plainly or by inverse variance
//     (o.Weighted). Scales is their number. When none holds an element in
//     either sketch there is no information: J = 0.5, StdErr = 0.5.
func hmtJaccard(a, b *Sketch, p HMTParams, bins int, o HMTOptions) Estimate {
	e := Estimate{Alpha: p.Alpha}
	va, vb := a.Values, b.Values
	if len(va) == 0 || len(vb) == 0 {
		if len(va) == len(vb) {
			e.J = 1
		} else {
			e.Below = true
		}
		return e
	}
	sa, sb := int64(va[0]), int64(vb[0])
	la, lb := math.Float64frombits(va[1]), math.Float64frombits(vb[1])
	r := math.Exp2(-math.Abs(la - lb))
	t := int64(p.Scales)
	lo, hi := max(sa, sb), min(sa, sb)+t-1
	if lo > hi || (!o.AsWritten && r < p.Alpha) {
		e.J, e.Below = r, true
		return e
	}
	bitsB := a.Header.Bits
	xor := a.Header.Params&ParamXORPair != 0
	nb := bins
	if xor {
		nb = bins / 2
	}
	pc := 0.0 // chance agreement of two b-bit values
	if bitsB < 64 {
		pc = math.Ldexp(1, -int(bitsB))
	}
	sc := hmtScales{va: va, vb: vb, sa: sa, sb: sb, nb: nb, full: bitsB == 64, pc: pc}
	n := 0
	var sum, vsum float64
	for i := lo; i <= hi; i++ {
		q, Q, m := sc.at(i)
		if m == 0 {
			continue
		}
		sum += q
		vsum += Q * (1 - Q) / (float64(m) * (1 - pc) * (1 - pc))
		n++
	}
	e.Scales = n
	if n == 0 {
		e.J, e.StdErr = 0.5, 0.5
		return e
	}
	theta := sum / float64(n)
	se := math.Sqrt(vsum) / float64(n)
	if o.Weighted {
		theta, se = sc.inverseVariance(lo, hi, max(la, lb), p.Log2InvBeta(), theta, xor)
	}
	if !xor {
		e.J, e.StdErr = math.Max(0, math.Min(1, theta)), se
		return e
	}
	j := math.Sqrt(math.Max(0, math.Min(1, theta)))
	if j > 0 {
		se /= 2 * j
	} else {
		se = math.Sqrt(se)
	}
	e.J, e.StdErr = j, math.Min(se, 1)
	return e
}

// hmtScales reads the blocks of two HMT sketches by scale number.
type hmtScales struct {
	va, vb []uint64
	sa, sb int64
	nb     int
	full   bool
	pc     float64 // chance agreement of two b-bit values (0 for full ones)
}

// at returns scale i's estimate q of θ (J, or J² for XOR pairs), its raw
// match fraction Q and its number m of compared bins (0: no information).
func (c *hmtScales) at(i int64) (q, Q float64, m int) {
	oa, ob := 2+int(i-c.sa)*c.nb, 2+int(i-c.sb)*c.nb
	eq, m := binsMatch(c.va[oa:oa+c.nb], c.vb[ob:ob+c.nb:ob+c.nb], c.full)
	if m == 0 {
		return 0, 0, 0
	}
	Q = float64(eq) / float64(m)
	return (Q - c.pc) / (1 - c.pc), Q, m
}

// inverseVariance combines the estimates of scales lo … hi by the variance
// model of HMTOptions.Weighted evaluated at the plain average theta0; scale
// i's scaled weight is 2^(lmax + i·lib).
func (c *hmtScales) inverseVariance(lo, hi int64, lmax, lib, theta0 float64, xor bool) (theta, se float64) {
	pc := c.pc
	th := math.Max(0, math.Min(1, theta0))
	j, d := th, 1.0 // J and dθ/dJ
	if xor {
		j = math.Sqrt(th)
		d = 2 * j
	}
	Q := pc + (1-pc)*th
	c1 := Q * (1 - Q) / ((1 - pc) * (1 - pc))
	c2 := d * d * j * (1 - j)
	zero := c1+c2 == 0
	if zero { // θ at 0 or 1: the weights need only the relative sizes
		c1, c2 = 1, 1
	}
	var sw, swq float64
	for i := lo; i <= hi; i++ {
		q, _, m := c.at(i)
		if m == 0 {
			continue
		}
		v := c1/float64(m) + c2*math.Exp2(-(lmax+float64(i)*lib))
		sw += 1 / v
		swq += q / v
	}
	theta = swq / sw
	if !zero {
		se = math.Sqrt(1 / sw)
	}
	return theta, se
}

// binsMatch counts the equal bins of two blocks: for full values (full)
// bins empty in both are left out of m, for b-bit ones every bin counts.
func binsMatch(a, b []uint64, full bool) (eq, m int) {
	b = b[:len(a)]
	both := 0
	for j, v := range a {
		if v == b[j] {
			if full && v == HMTEmpty {
				both++
			} else {
				eq++
			}
		}
	}
	return eq, len(a) - both
}

// BinsJaccard is the UnwtdSimilarity of HMT Algorithm 3.4 line 6 for one
// scale: two blocks of one-permutation bins of the same scale number (full
// values from package weighted's HMT.SketchScale, or compressed by
// CompressBins with the same bits and xorPairs). Full values: J =
// matches/(bins not empty in both), StdErr binomial; b-bit: the corrected
// (2^b Q − 1)/(2^b − 1), clamped to [0, 1]; XOR pairs: the square root of
// the corrected estimate of J². Blocks of different lengths, bits outside
// {1, 2, 4, 8, 16, 32, 64} or XOR pairs at 64 bits give ErrInvalid; when no
// bin holds an element J = 0.5, StdErr = 0.5. No allocation.
func BinsJaccard(a, b []uint64, bits int, xorPairs bool) (Estimate, error) {
	if len(a) != len(b) || len(a) == 0 {
		return Estimate{}, fmt.Errorf("%w: blocks of %d and %d bins", ErrInvalid, len(a), len(b))
	}
	if bits < 1 || bits > 64 || !validBits(uint8(bits)) || (xorPairs && bits == 64) {
		return Estimate{}, fmt.Errorf("%w: bits %d (xor pairs %v)", ErrInvalid, bits, xorPairs)
	}
	eq, m := binsMatch(a, b, bits == 64)
	if m == 0 {
		return Estimate{J: 0.5, StdErr: 0.5}, nil
	}
	e := fromMatches(eq, m, uint8(bits))
	if xorPairs {
		q := float64(eq) / float64(m)
		th := (2*q - 1) // bits = 1 gives pc = 1/2; general b below
		if bits != 1 {
			pc := math.Ldexp(1, -bits)
			th = (q - pc) / (1 - pc)
		}
		j := math.Sqrt(math.Max(0, math.Min(1, th)))
		se := e.StdErr
		if j > 0 {
			se /= 2 * j
		} else {
			se = math.Sqrt(se)
		}
		e = Estimate{J: j, StdErr: math.Min(se, 1)}
	}
	return e, nil
}

// hmtRemixKey separates HMT's bin remix from Compress's slot remix.
const hmtRemixKey = 0x686d74 // "hmt"

// binRemix maps bin value v of bin j at scale number scale to a fresh
// pseudo-random word: keyed by the scale number, not the block position, so
// that blocks of the same scale compress alike in sketches whose first
// scales differ.
func binRemix(seed uint64, scale int64, j int, v uint64) uint64 {
	return rng.Hash2(rng.Hash(seed^remixKey^hmtRemixKey, uint64(scale)), v, uint64(j))
}

// CompressBins appends to dst the b-bit version of one block of
// one-permutation bins of scale number scale (b in {1, 2, 4, 8, 16, 32}):
// value j is the low b bits of a remix of bins[j] keyed by (seed, scale,
// j), so two bins agree with probability 1 when equal and 2^−b otherwise
// (Li and König's b-bit hashing, HMT section 2). With xorPairs value j is
// the low b bits of the remix of bins[2j] XOR bins[2j+1] (b = 1 is the
// paper's "½-bit"), which agree beyond chance only when both bins do,
// probability J² for independent bins; len(bins) must then be even. An
// empty bin (HMTEmpty) is remixed like any value. No allocation beyond dst.
func CompressBins(dst, bins []uint64, seed uint64, scale int64, b int, xorPairs bool) ([]uint64, error) {
	if b < 1 || b >= 64 || !validBits(uint8(b)) {
		return dst, fmt.Errorf("%w: b = %d not in {1,2,4,8,16,32}", ErrUnsupported, b)
	}
	mask := uint64(1)<<b - 1
	if !xorPairs {
		for j, v := range bins {
			dst = append(dst, binRemix(seed, scale, j, v)&mask)
		}
		return dst, nil
	}
	if len(bins)%2 != 0 {
		return dst, fmt.Errorf("%w: XOR pairs need an even number of bins, have %d", ErrUnsupported, len(bins))
	}
	for j := 0; j < len(bins)/2; j++ {
		dst = append(dst, binRemix(seed, scale, j, bins[2*j]^bins[2*j+1])&mask)
	}
	return dst, nil
}

// CompressHMT returns the b-bit version of a full HMT or HMTDep sketch (HMT
// section 3.3, "The benefits of tunable unweighted size", with the b-bit
// hashing of Li and König), b in {1, 2, 4, 8, 16, 32}: the first scale and
// the total weight stay full words, every bin of scale s + r becomes
// CompressBins of its block at scale number s + r. Header.Bits = b, K
// unchanged. At the defaults (k = 256, t = 3, τ = 1: 128 bins per scale)
// and b = 2 a sketch holds 16 + 96 bytes of values instead of 3,088.
// JaccardHMT and Jaccard correct for chance matches. Sketches other than
// full-value HMT ones give ErrUnsupported. The result is newly allocated.
func CompressHMT(s *Sketch, b int) (*Sketch, error) {
	return compressHMT(s, b, false)
}

// CompressHMTPairs is CompressHMT with XOR pairs (CompressBins with
// xorPairs): B/2 values per scale, each the low b bits of the remix of two
// adjacent bins' XOR; b = 1 is the "½-bit" sketch of HMT section 3.3
// ("xoring pairs (the b = ½ case) gives a further improvement for larger
// similarities"). Each scale then estimates J², and the estimators report
// its square root. B must be even.
func CompressHMTPairs(s *Sketch, b int) (*Sketch, error) {
	return compressHMT(s, b, true)
}

func compressHMT(s *Sketch, b int, xor bool) (*Sketch, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	h := s.Header
	if h.Algorithm != HMT && h.Algorithm != HMTDep {
		return nil, fmt.Errorf("%w: %v is not an HMT algorithm", ErrUnsupported, h.Algorithm)
	}
	if h.Bits != 64 {
		return nil, fmt.Errorf("%w: already %d-bit", ErrUnsupported, h.Bits)
	}
	p, bins, _ := h.HMT()
	if xor && bins%2 != 0 {
		return nil, fmt.Errorf("%w: XOR pairs need an even number of bins, have %d", ErrUnsupported, bins)
	}
	out := &Sketch{Header: h, Size: s.Size}
	out.Header.Bits = uint8(b)
	if xor {
		out.Header.Params |= ParamXORPair
	}
	if len(s.Values) == 0 {
		if _, err := CompressBins(nil, nil, h.Seed, 0, b, xor); err != nil {
			return nil, err
		}
		return out, nil
	}
	nv := 2 + p.Scales*bins
	if xor {
		nv = 2 + p.Scales*bins/2
	}
	out.Values = make([]uint64, 2, nv)
	copy(out.Values, s.Values[:2])
	s0 := int64(s.Values[0])
	var err error
	for r := range p.Scales {
		blk := s.Values[2+r*bins : 2+(r+1)*bins]
		if out.Values, err = CompressBins(out.Values, blk, h.Seed, s0+int64(r), b, xor); err != nil {
			return nil, err
		}
	}
	return out, nil
}
