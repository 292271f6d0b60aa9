package weighted

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

func hmtSketch(h *HMT, fs []feature.Feature) *sketch.Sketch {
	return &sketch.Sketch{Header: h.Header(), Values: h.Sketch(nil, fs)}
}

// TestSketchScaleIsBlock: HMT.SketchScale(i) is exactly block i − s of
// Sketch, for both roundings and for footnote 1's binary β.
func TestSketchScaleIsBlock(t *testing.T) {
	s := rng.New(11)
	fs := logUniform(&s, 80, 1e-2, 1e2)
	for _, o := range []Options{{K: 64, Seed: 2}, {K: 64, Seed: 2, Independent: true},
		{K: 96, Seed: 3, Alpha: 0.8, BinaryBeta: true}, {K: 96, Seed: 3, Alpha: 0.8, Scales: 5, Tau: 2, BinaryBeta: true, Independent: true}} {
		h, err := NewHMT(o)
		if err != nil {
			t.Fatal(err)
		}
		v := h.Sketch(nil, fs)
		s0 := int(int64(v[0]))
		for r := range h.t {
			if got := h.SketchScale(nil, fs, s0+r); !slices.Equal(got, v[2+r*h.kb:2+(r+1)*h.kb]) {
				t.Errorf("%+v: SketchScale(%d) differs from block %d", o, s0+r, r)
			}
		}
	}
}

// TestBinaryBeta (HMT section 3.2, footnote 1): β = 2^(−1/m) lies in
// [α^(1/τ), α^(1/(τ+1))); scaling by β^(−i) equals w·2^(i/m) to a few ulps;
// the first scale still puts the scaled total in [target, target/β); and
// an α without such an m is refused.
func TestBinaryBeta(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		tau   int
		m     int
	}{{0.5, 1, 1}, {0.5, 3, 3}, {0.8, 1, 4}, {0.9, 2, 14}, {0.3, 1, 1}} {
		h, err := NewHMT(Options{K: 64, Alpha: c.alpha, Tau: c.tau, Scales: c.tau + 2, BinaryBeta: true})
		if err != nil {
			t.Fatalf("α=%v τ=%d: %v", c.alpha, c.tau, err)
		}
		beta := math.Exp2(-h.log2InvBeta)
		if m := int(math.Round(1 / h.log2InvBeta)); m != c.m {
			t.Errorf("α=%v τ=%d: m = %d, want %d", c.alpha, c.tau, m, c.m)
		}
		if beta < math.Pow(h.alpha, 1/float64(c.tau))*(1-1e-12) || beta >= math.Pow(h.alpha, 1/float64(c.tau+1)) {
			t.Errorf("α=%v τ=%d: β = %v outside footnote 1's range", c.alpha, c.tau, beta)
		}
		for _, i := range []int{-37, -5, -1, 0, 1, 2, 7, 40} {
			w, _ := h.scaled(3.7, i)
			if want := 3.7 * math.Pow(2, float64(i)/float64(c.m)); math.Abs(w/want-1) > 1e-14 {
				t.Errorf("α=%v: scaled(3.7, %d) = %v, want %v", c.alpha, i, w, want)
			}
		}
		s := rng.New(5)
		fs := logUniform(&s, 50, 1e-3, 1e3)
		sc, l2 := h.Scale(fs)
		w := math.Exp2(l2 + float64(sc)*h.log2InvBeta)
		if w < h.target*(1-1e-12) || w >= h.target/beta*(1+1e-12) {
			t.Errorf("α=%v: first scale puts |w|₁ at %v, want [%v, %v)", c.alpha, w, h.target, h.target/beta)
		}
	}
	// Accuracy with β = 2^(−1/4) (α = 0.8, τ = 1): over R = 100 seeds the
	// mean estimate is within Theorem 3.2's 1/(W'−1), W' ≥ L·k/(t−τ) = 512,
	// plus 4·SD/√R of the exact J; the pair (weight ratio ≥ 0.8 by
	// construction) always shares at least t − τ − 1 = 1 scale.
	a, c := pairAt(41, 100, 0.1, 10, 0.9)
	j := Jaccard(a, c)
	const R = 100
	var sum, sum2 float64
	for r := range R {
		h, _ := NewHMT(Options{K: 256, Seed: uint64(r), Alpha: 0.8, BinaryBeta: true})
		e, err := sketch.JaccardHMT(hmtSketch(h, a), hmtSketch(h, c), sketch.HMTOptions{AsWritten: true})
		if err != nil || e.Below || e.Scales < 1 {
			t.Fatalf("binary β: %+v %v", e, err)
		}
		sum += e.J - j
		sum2 += (e.J - j) * (e.J - j)
	}
	bias := sum / R
	sd := math.Sqrt(sum2/R - bias*bias)
	if tol := 1.0/511 + 4*sd/math.Sqrt(R); math.Abs(bias) > tol {
		t.Errorf("binary β, J=%.3f: bias %+.4f > %.4f", j, bias, tol)
	}
	t.Logf("binary β (m = 4), J=%.3f: bias %+.4f, SD %.4f", j, bias, sd)
	if _, err := NewHMT(Options{Alpha: 0.2, BinaryBeta: true}); !errors.Is(err, ErrOptions) {
		t.Errorf("α = 0.2, τ = 1 has no β = 2^(−1/m) in [0.2, 0.447): %v", err)
	}
}

// TestCompressHMTChance is an exact check of b-bit and ½-bit compression
// bin by bin: equal full bins always stay equal, and unequal ones collide
// with probability 2^−b (½-bit: a pair of bins stays equal when both bins
// are, and collides with probability 1/2 otherwise). Over M unequal bins
// the collision fraction has SD sqrt(p(1−p)/M); we allow 4 SD.
func TestCompressHMTChance(t *testing.T) {
	for _, b := range []int{1, 2, 4} {
		for _, xor := range []bool{false, true} {
			var same, diff, coll int
			for r := range 40 {
				h, _ := NewHMT(Options{K: 128, Seed: uint64(r)})
				a, c := pairAt(uint64(700+r), 60, 0.1, 10, 0.7)
				sa, sc := hmtSketch(h, a), hmtSketch(h, c)
				comp := sketch.CompressHMT
				if xor {
					comp = sketch.CompressHMTPairs
				}
				ca, err := comp(sa, b)
				if err != nil {
					t.Fatal(err)
				}
				cc, _ := comp(sc, b)
				s0a, s0c := int64(sa.Values[0]), int64(sc.Values[0])
				nb := h.kb
				if xor {
					nb /= 2
				}
				for i := max(s0a, s0c); i <= min(s0a, s0c)+int64(h.t)-1; i++ {
					for j := range nb {
						oa, oc := 2+int(i-s0a)*h.kb, 2+int(i-s0c)*h.kb
						var eq bool
						if xor {
							eq = sa.Values[oa+2*j] == sc.Values[oc+2*j] && sa.Values[oa+2*j+1] == sc.Values[oc+2*j+1]
						} else {
							eq = sa.Values[oa+j] == sc.Values[oc+j]
						}
						x, y := ca.Values[2+int(i-s0a)*nb+j], cc.Values[2+int(i-s0c)*nb+j]
						switch {
						case eq && x != y:
							t.Fatalf("b=%d xor=%v: equal bins compress differently", b, xor)
						case eq:
							same++
						default:
							diff++
							if x == y {
								coll++
							}
						}
					}
				}
			}
			p := math.Ldexp(1, -b)
			f := float64(coll) / float64(diff)
			if sd := math.Sqrt(p * (1 - p) / float64(diff)); math.Abs(f-p) > 4*sd {
				t.Errorf("b=%d xor=%v: chance collisions %.4f of %d unequal bins, want %.4f ± %.4f", b, xor, f, diff, p, 4*sd)
			}
		}
	}
}

// TestCompressHMTAccuracy: over R = 120 sample functions at k = 256 (128
// bins per scale), the mean of the b-bit (b = 1, 2, 8) and ½-bit estimates
// is within bias + 4·SD/√R of the exact weighted Jaccard, where the bias
// bound adds Theorem 3.2's rounding bias 1/(W'−1), W' ≥ L·k/(t−τ) = 512,
// and the fraction of bins empty in either sketch (measured on the full
// sketches: an empty bin cannot be recognised after compression, so the
// per-scale estimate can move by at most that fraction). The ½-bit bound is
// doubled: its J is the square root of an estimate of J², whose
// curvature adds a bias of order Var/(8J³). The reported StdErr is checked
// to be within a factor 1.5 of the observed SD.
func TestCompressHMTAccuracy(t *testing.T) {
	const R, k = 120, 256
	type variant struct {
		b   int
		xor bool
	}
	vs := []variant{{1, false}, {2, false}, {8, false}, {1, true}}
	for ti, target := range []float64{0.5, 0.8, 0.95} {
		a, c := pairAt(uint64(900+ti), 100, 1e-3, 1e3, target)
		j := Jaccard(a, c)
		var sum, sum2, se [4]float64
		var empty float64
		for r := range R {
			h, _ := NewHMT(Options{K: k, Seed: uint64(r)})
			sa, sc := hmtSketch(h, a), hmtSketch(h, c)
			empty += emptyFrac(h, sa.Values, sc.Values) / R
			for vi, v := range vs {
				comp := sketch.CompressHMT
				if v.xor {
					comp = sketch.CompressHMTPairs
				}
				ca, _ := comp(sa, v.b)
				cc, _ := comp(sc, v.b)
				e, err := sketch.JaccardHMT(ca, cc, sketch.HMTOptions{})
				if err != nil || e.Below {
					t.Fatalf("J=%.2f %+v: %+v %v", j, v, e, err)
				}
				d := e.J - j
				sum[vi] += d
				sum2[vi] += d * d
				se[vi] += e.StdErr / R
			}
		}
		for vi, v := range vs {
			bias := sum[vi] / R
			sd := math.Sqrt(sum2[vi]/R - bias*bias)
			tol := 1.0/511 + empty + 4*sd/math.Sqrt(R)
			if v.xor {
				tol *= 2
			}
			if math.Abs(bias) > tol {
				t.Errorf("J=%.3f b=%d xor=%v: bias %+.4f > %.4f", j, v.b, v.xor, bias, tol)
			}
			if se[vi] > 1.5*sd || se[vi] < sd/1.5 {
				t.Errorf("J=%.3f b=%d xor=%v: mean StdErr %.4f vs observed SD %.4f", j, v.b, v.xor, se[vi], sd)
			}
			t.Logf("J=%.3f b=%d xor=%v: bias %+.4f (tol %.4f), SD %.4f, StdErr %.4f, empty %.4f", j, v.b, v.xor, bias, tol, sd, se[vi], empty)
		}
	}
}

// emptyFrac returns the fraction of compared bins (common scales) empty in
// either sketch.
func emptyFrac(h *HMT, a, b []uint64) float64 {
	sa, sb := int64(a[0]), int64(b[0])
	var e, n float64
	for i := max(sa, sb); i <= min(sa, sb)+int64(h.t)-1; i++ {
		oa, ob := 2+int(i-sa)*h.kb, 2+int(i-sb)*h.kb
		for j := range h.kb {
			n++
			if a[oa+j] == Empty || b[ob+j] == Empty {
				e++
			}
		}
	}
	return e / n
}

// TestJaccardHMTAsWritten: Algorithm 3.4 as written answers "< α" only
// when the sketches share no scale. With t = 10, τ = 3 (section 3.3), a set
// and its copy scaled by 0.4 (J = 0.4 exactly, weight ratio 0.4 < α = 0.5)
// share t − ⌈log_{1/β} 2.5⌉ = 10 − 4 = 6 scales: the default rule says
// Below, AsWritten estimates, with mean over R = 100 seeds within
// 1/(W'−1) + 4·SD/√R of 0.4 (Theorem 3.2 part 3, W' ≥ L·k/(t−τ) = 128 the
// smallest scaled weight). Weights 2^10 apart share no scale: Below both
// ways, with J the weight ratio. Pairs whose ratio is at least α get the
// same answer both ways.
func TestJaccardHMTAsWritten(t *testing.T) {
	const R = 100
	s := rng.New(21)
	a := logUniform(&s, 100, 1e-2, 1e2)
	c := scaleWeights(a, 0.4)
	j := Jaccard(a, c)
	var sum, sum2 float64
	asw := sketch.HMTOptions{AsWritten: true}
	for r := range R {
		h, _ := NewHMT(Options{K: 224, Seed: uint64(r), Scales: 10, Tau: 3})
		sa, sc := hmtSketch(h, a), hmtSketch(h, c)
		if e, _ := sketch.Jaccard(sa, sc); !e.Below {
			t.Fatalf("ratio 0.4 < α: default rule gave %+v", e)
		}
		e, err := sketch.JaccardHMT(sa, sc, asw)
		if err != nil || e.Below || e.Scales != 6 {
			t.Fatalf("as written: %+v %v", e, err)
		}
		sum += e.J - j
		sum2 += (e.J - j) * (e.J - j)
		if r == 0 {
			far := hmtSketch(h, scaleWeights(a, 1.0/1024))
			e, _ := sketch.JaccardHMT(sa, far, asw)
			if !e.Below || e.Scales != 0 || math.Abs(e.J-1.0/1024) > 1e-9 {
				t.Errorf("no common scale: %+v", e)
			}
			b2, _ := pairAt(31, 60, 0.1, 10, 0.6)
			for _, x := range [][2][]feature.Feature{{b2, b2}, {a, scaleWeights(a, 0.6)}, {b2, scaleWeights(b2, 1.9)}} {
				s1, s2 := hmtSketch(h, x[0]), hmtSketch(h, x[1])
				e1, _ := sketch.Jaccard(s1, s2)
				e2, _ := sketch.JaccardHMT(s1, s2, asw)
				if e1 != e2 {
					t.Errorf("ratio ≥ α: %+v vs as written %+v", e1, e2)
				}
			}
		}
	}
	bias := sum / R
	sd := math.Sqrt(sum2/R - bias*bias)
	if tol := 1.0/127 + 4*sd/math.Sqrt(R); math.Abs(bias) > tol {
		t.Errorf("J=%.3f as written: bias %+.4f > %.4f", j, bias, tol)
	}
	t.Logf("J=%.3f as written: bias %+.4f, SD %.4f", j, bias, sd)
}

// TestJaccardHMTWeighted: the variance-weighted combination of scales
// (section 3.3) over R = 200 seeds. Unbiased: each scale's estimate is
// (up to Theorem 3.2's 1/(W'−1)) unbiased and the weights depend on the
// data only through bin counts and the plain mean, so the mean is within
// 1/(W'−1) + 4·SD/√R of J. Not worse: inverse-variance weights minimize the
// variance of a combination of independent unbiased estimates; the scales
// share their rounding thresholds (ReduceToUnwtdDep), so we allow the
// observed SD 5% above the plain mean's. Its StdErr, which adds the
// rounding term, is within a factor 1.5 of the observed SD.
func TestJaccardHMTWeighted(t *testing.T) {
	const R = 200
	for _, o := range []Options{{K: 224, Scales: 10, Tau: 3}, {K: 256}} {
		for ti, target := range []float64{0.6, 0.9} {
			a, c := pairAt(uint64(1200+ti), 100, 1e-2, 1e2, target)
			j := Jaccard(a, c)
			var sp, sp2, sw, sw2, se float64
			var wmin float64
			var nt int
			for r := range R {
				o.Seed = uint64(r)
				h, _ := NewHMT(o)
				wmin, nt = h.target, h.t
				sa, sc := hmtSketch(h, a), hmtSketch(h, c)
				ep, _ := sketch.JaccardHMT(sa, sc, sketch.HMTOptions{})
				ew, err := sketch.JaccardHMT(sa, sc, sketch.HMTOptions{Weighted: true})
				if err != nil || ew.Below || ew.Scales != ep.Scales {
					t.Fatalf("%+v %v", ew, err)
				}
				sp += ep.J - j
				sp2 += (ep.J - j) * (ep.J - j)
				sw += ew.J - j
				sw2 += (ew.J - j) * (ew.J - j)
				se += ew.StdErr / R
			}
			bp, bw := sp/R, sw/R
			sdp, sdw := math.Sqrt(sp2/R-bp*bp), math.Sqrt(sw2/R-bw*bw)
			if tol := 1/(wmin-1) + 4*sdw/math.Sqrt(R); math.Abs(bw) > tol {
				t.Errorf("t=%d J=%.3f: weighted bias %+.4f > %.4f", o.Scales, j, bw, tol)
			}
			if sdw > 1.05*sdp {
				t.Errorf("t=%d J=%.3f: weighted SD %.4f > 1.05 × plain SD %.4f", o.Scales, j, sdw, sdp)
			}
			if se > 1.5*sdw || se < sdw/1.5 {
				t.Errorf("t=%d J=%.3f: weighted StdErr %.4f vs observed SD %.4f", o.Scales, j, se, sdw)
			}
			t.Logf("t=%d J=%.3f: plain bias %+.4f SD %.4f; weighted bias %+.4f SD %.4f StdErr %.4f", nt, j, bp, sdp, bw, sdw, se)
		}
	}
}

// TestCompressedHMTEncoding: b-bit and ½-bit HMT sketches round-trip
// through the binary encoding (first scale and log₂ weight as full words),
// are a fraction of the full size, and are refused when malformed.
func TestCompressedHMTEncoding(t *testing.T) {
	h, _ := NewHMT(Options{K: 256, Seed: 7})
	s := rng.New(2)
	full := hmtSketch(h, logUniform(&s, 200, 0.1, 10))
	fb, _ := full.MarshalBinary()
	for _, c := range []struct {
		b    int
		xor  bool
		want int // bytes of values
	}{{1, false, 16 + 48}, {2, false, 16 + 96}, {8, false, 16 + 384}, {1, true, 16 + 24}} {
		comp := sketch.CompressHMT
		if c.xor {
			comp = sketch.CompressHMTPairs
		}
		cs, err := comp(full, c.b)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := cs.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back sketch.Sketch
		if err := back.UnmarshalBinary(enc); err != nil {
			t.Fatal(err)
		}
		if back.Header != cs.Header || !slices.Equal(back.Values, cs.Values) {
			t.Errorf("b=%d xor=%v: round trip differs", c.b, c.xor)
		}
		// The header differs only in the params uvarint (ParamXORPair is bit 63).
		dp := len(binary.AppendUvarint(nil, cs.Header.Params)) - len(binary.AppendUvarint(nil, full.Header.Params))
		if got := len(enc) - (len(fb) - 8*len(full.Values)) - dp; got != c.want {
			t.Errorf("b=%d xor=%v: %d bytes of values, want %d", c.b, c.xor, got, c.want)
		}
		bad := cs.Clone()
		bad.Values[5] = 1 << c.b
		if err := bad.Validate(); !errors.Is(err, sketch.ErrInvalid) {
			t.Errorf("b=%d: wide value accepted: %v", c.b, err)
		}
		if _, err := comp(cs, c.b); !errors.Is(err, sketch.ErrUnsupported) {
			t.Errorf("b=%d: compressed twice: %v", c.b, err)
		}
	}
	if _, err := sketch.CompressHMT(full, 3); !errors.Is(err, sketch.ErrUnsupported) {
		t.Errorf("b = 3: %v", err)
	}
}
