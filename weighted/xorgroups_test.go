package weighted

import (
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/sketch"
)

// TestXORGroupsSim10: HMT section 3.3's XOR of g > 2 b-bit values ("take 10
// b-bit values and just store their XOR … an estimate of Sim^10"), on CWS
// samples, whose K slots are independent and agree with probability the
// exact weighted Jaccard J. A stored value then agrees with probability
// Q = J^g + (1 − J^g)·2^−b exactly, so over m = K/g values the corrected
// θ̂ = (Q̂ − 2^−b)/(1 − 2^−b) is Binomial-based and unbiased for J^g with
// SE = sqrt(Q(1−Q)/m)/(1 − 2^−b); the test fails when |θ̂ − J^g| > 4 SE
// (probability 6e−5 per check, 8 checks). The estimate J = θ̂^(1/g) must lie
// within 4 delta-method SEs, 4·SE/(g·J^(g−1)), plus 1e−3 for the curvature
// of the g-th root. g = 2 must equal CompressBins' XOR pairs.
func TestXORGroupsSim10(t *testing.T) {
	const K = 20000
	c, _ := NewCWS(Options{K: K, Seed: 5})
	for _, target := range []float64{0.95, 0.85} {
		a, b := pairAt(31, 40, 1e-3, 1e3, target)
		j := Jaccard(a, b)
		va, vb := c.Sketch(nil, a), c.Sketch(nil, b)
		for _, g := range []int{5, 10} {
			for _, bits := range []int{1, 2} {
				xa, err := sketch.CompressBinsXOR(nil, va, 5, 0, bits, g)
				if err != nil {
					t.Fatal(err)
				}
				xb, _ := sketch.CompressBinsXOR(nil, vb, 5, 0, bits, g)
				eq := matches(xa, xb)
				th, _ := sketch.XORTheta(eq, len(xa), bits)
				jg := math.Pow(j, float64(g))
				p := math.Ldexp(1, -bits)
				q := jg + (1-jg)*p
				se := math.Sqrt(q*(1-q)/float64(len(xa))) / (1 - p)
				if math.Abs(th-jg) > 4*se {
					t.Errorf("J=%.4f g=%d b=%d: θ = %.4f, J^g = %.4f, |diff| > 4 SE = %.4f", j, g, bits, th, jg, 4*se)
				}
				e, err := sketch.BinsJaccardXOR(xa, xb, bits, g)
				if err != nil {
					t.Fatal(err)
				}
				if bound := 4*se/(float64(g)*math.Pow(j, float64(g-1))) + 1e-3; math.Abs(e.J-j) > bound {
					t.Errorf("J=%.4f g=%d b=%d: estimate %.4f, |diff| > %.4f", j, g, bits, e.J, bound)
				}
				t.Logf("J=%.4f g=%d b=%d: θ %.4f (J^g %.4f), estimate %.4f ± %.4f", j, g, bits, th, jg, e.J, e.StdErr)
			}
		}
	}
	// g = 2 is the ½-bit XOR pair of CompressBins.
	h, _ := NewHMT(Options{K: 256, Seed: 2})
	x, _ := pairAt(8, 50, 0.1, 10, 0.8)
	blk := h.SketchScale(nil, x, 4)
	p2, _ := sketch.CompressBins(nil, blk, 2, 4, 1, true)
	g2, _ := sketch.CompressBinsXOR(nil, blk, 2, 4, 1, 2)
	if !slices.Equal(p2, g2) {
		t.Error("g = 2 differs from CompressBins' XOR pairs")
	}
	if _, err := sketch.CompressBinsXOR(nil, blk, 2, 4, 1, 3); err == nil { // 128 bins
		t.Error("g = 3 accepted for 128 bins")
	}
}
