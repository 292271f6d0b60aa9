package weighted

import (
	"fmt"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// benchDoc returns n features with exponential weights scaled to sum to
// total (the anchor: n = 1,000 weights summing to 1).
func benchDoc(n int, total float64) []feature.Feature {
	s := rng.New(uint64(n))
	fs := make([]feature.Feature, n)
	var sum float64
	for i := range fs {
		fs[i] = feature.Feature{ID: s.Uint64(), Weight: -logf(s.Open01())}
		sum += fs[i].Weight
	}
	for i := range fs {
		fs[i].Weight *= total / sum
	}
	return fs
}

func logf(x float64) float64 { return lnPos(x) }

// BenchmarkSketch times one sketch (ns/op = ns per document) for the three
// samplers side by side: go test ./weighted -bench Sketch -run ^$
func BenchmarkSketch(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		fs := benchDoc(n, 1)
		for _, k := range []int{64, 128, 256, 512} {
			c, _ := NewCWS(Options{K: k})
			ic, _ := NewICWS(Options{K: k})
			h, _ := NewHMT(Options{K: k})
			for _, s := range []struct {
				name string
				s    valuer
			}{{"cws", c}, {"icws", ic}, {"hmt", h}} {
				b.Run(fmt.Sprintf("%s/n=%d/k=%d", s.name, n, k), func(b *testing.B) {
					dst := s.s.Sketch(nil, fs)
					b.ReportAllocs()
					b.SetBytes(int64(16 * n))
					for b.Loop() {
						dst = s.s.Sketch(dst[:0], fs)
					}
				})
			}
		}
	}
}

// BenchmarkHMTWeightScale: HMT's time does not depend on the scale of the
// weights (n = 1,000, k = 256, |w|₁ = 2^−64, 1, 2^64).
func BenchmarkHMTWeightScale(b *testing.B) {
	h, _ := NewHMT(Options{K: 256})
	for _, e := range []int{-64, 0, 64} {
		fs := benchDoc(1000, pow2(e))
		b.Run(fmt.Sprintf("sum=2^%d", e), func(b *testing.B) {
			dst := h.Sketch(nil, fs)
			b.ReportAllocs()
			for b.Loop() {
				dst = h.Sketch(dst[:0], fs)
			}
		})
	}
}

// BenchmarkCWSEnhancements measures what each MMT section-3 speed-up buys
// (n = 1,000, k = 256): all on, and each one disabled.
func BenchmarkCWSEnhancements(b *testing.B) {
	fs := benchDoc(1000, 1)
	for _, v := range []struct {
		name string
		dis  Enhancement
	}{{"all", 0}, {"no-partial-z", PartialZ}, {"no-defer-y", DeferY}, {"no-avoid-inversion", AvoidInversion | PartialZ}, {"none", AvoidInversion | PartialZ | DeferY}} {
		c, _ := NewCWS(Options{K: 256, Disable: v.dis})
		b.Run(v.name, func(b *testing.B) {
			dst := c.Sketch(nil, fs)
			b.ReportAllocs()
			for b.Loop() {
				dst = c.Sketch(dst[:0], fs)
			}
		})
	}
}

// BenchmarkCWSBeta compares the exact β with MMT section 3.5's oblivious
// 8-bit and adaptive unary approximations (n = 1,000, k = 256), and the
// approximations' references (every β drawn in full, same samples). Besides
// ns/op it reports cpu-ns/op, the process's CPU time per sketch: the loop
// allocates nothing, so on a shared machine this is the steadier measure.
func BenchmarkCWSBeta(b *testing.B) {
	fs := benchDoc(1000, 1)
	for _, v := range []struct {
		name string
		beta Beta
		dis  Enhancement
	}{{"exact", BetaExact, 0}, {"oblivious", BetaOblivious, 0}, {"unary", BetaUnary, 0},
		{"oblivious-full", BetaOblivious, ApproxBeta}, {"unary-full", BetaUnary, ApproxBeta}} {
		c, _ := NewCWS(Options{K: 256, Beta: v.beta, Disable: v.dis})
		b.Run(v.name, func(b *testing.B) {
			dst := c.Sketch(nil, fs)
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				dst = c.Sketch(dst[:0], fs)
			}
			if cpu1 := processCPU(); cpu0 >= 0 && cpu1 >= 0 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// BenchmarkHMTChunked: HMT section 3.3's per-element 22-bit chunks against
// one 64-bit hash per element, one scale, the paper's section-5 setup of
// 1,024 expected elements into 128 bins, from n = 1,000 features (about
// one element each) and from n = 32 (about 32 each, where a feature's
// chunks share its words).
func BenchmarkHMTChunked(b *testing.B) {
	h, _ := NewHMT(Options{K: 256})
	for _, n := range []int{1000, 32} {
		fs := benchDoc(n, 1024)
		b.Run(fmt.Sprintf("hash64/n=%d", n), func(b *testing.B) {
			dst := h.SketchScale(nil, fs, 0)
			for b.Loop() {
				dst = h.SketchScale(dst[:0], fs, 0)
			}
		})
		b.Run(fmt.Sprintf("chunk22/n=%d", n), func(b *testing.B) {
			dst, _ := h.SketchScaleChunked(nil, fs, 0, 2)
			for b.Loop() {
				dst, _ = h.SketchScaleChunked(dst[:0], fs, 0, 2)
			}
		})
	}
}
