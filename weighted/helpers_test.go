package weighted

import (
	"math"
	"sort"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// sampler is what CWS, ICWS, Replicated and HMT have in common.
type valuer interface {
	Sketch(dst []uint64, fs []feature.Feature) []uint64
}

type sampler interface {
	valuer
	Samples(dst []Sample, fs []feature.Feature) []Sample
}

// logUniform returns n features with IDs from the stream and weights
// log-uniform over [lo, hi].
func logUniform(s *rng.Stream, n int, lo, hi float64) []feature.Feature {
	fs := make([]feature.Feature, n)
	for i := range fs {
		fs[i] = feature.Feature{ID: s.Uint64(), Weight: lo * math.Pow(hi/lo, s.Float64())}
	}
	return fs
}

// pairAt returns a pair of weighted sets whose exact weighted Jaccard is
// within 0.005 of target: B is A with weights multiplied by e^(θ·g_x)
// (g_x uniform on [−1, 1]) plus n new features of weights θ/8 times
// log-uniform ones, θ found by bisection.
func pairAt(seed uint64, n int, lo, hi, target float64) (a, b []feature.Feature) {
	s := rng.New(seed)
	a = logUniform(&s, n, lo, hi)
	g := make([]float64, n)
	for i := range g {
		g[i] = s.Float64()*2 - 1
	}
	extra := logUniform(&s, n, lo, hi)
	mk := func(theta float64) []feature.Feature {
		out := make([]feature.Feature, 0, 2*n)
		for i, f := range a {
			out = append(out, feature.Feature{ID: f.ID, Weight: f.Weight * math.Exp(theta*g[i])})
			out = append(out, feature.Feature{ID: extra[i].ID, Weight: extra[i].Weight * theta / 8})
		}
		return out
	}
	loT, hiT := 0.0, 8.0
	for range 60 {
		mid := (loT + hiT) / 2
		if Jaccard(a, mk(mid)) > target {
			loT = mid
		} else {
			hiT = mid
		}
	}
	return a, mk((loT + hiT) / 2)
}

func scaleWeights(fs []feature.Feature, c float64) []feature.Feature {
	out := make([]feature.Feature, len(fs))
	for i, f := range fs {
		out[i] = feature.Feature{ID: f.ID, Weight: f.Weight * c}
	}
	return out
}

// logWeights returns fs with weights ln(w) + shift.
func logWeights(fs []feature.Feature, shift float64) []feature.Feature {
	out := make([]feature.Feature, len(fs))
	for i, f := range fs {
		out[i] = feature.Feature{ID: f.ID, Weight: lnPos(f.Weight) + shift}
	}
	return out
}

func matches(a, b []uint64) int {
	n := 0
	for i := range a {
		if a[i] == b[i] {
			n++
		}
	}
	return n
}

// ksUniform returns the Kolmogorov–Smirnov statistic of xs against U(0,1).
func ksUniform(xs []float64) float64 {
	sort.Float64s(xs)
	n := float64(len(xs))
	var d float64
	for i, x := range xs {
		d = math.Max(d, math.Max(float64(i+1)/n-x, x-float64(i)/n))
	}
	return d
}

func TestJaccardSortedEqualsJaccard(t *testing.T) {
	s := rng.New(99)
	for trial := 0; trial < 200; trial++ {
		var a, b []feature.Feature
		for id := uint64(0); id < 60; id++ {
			if s.Intn(3) > 0 {
				a = append(a, feature.Feature{ID: id, Weight: s.Float64() * 10})
			}
			if s.Intn(3) > 0 {
				b = append(b, feature.Feature{ID: id, Weight: s.Float64() * 10})
			}
		}
		if got, want := JaccardSorted(a, b), Jaccard(a, b); math.Abs(got-want) > 1e-12 {
			t.Fatalf("JaccardSorted = %v, Jaccard = %v", got, want)
		}
	}
	if JaccardSorted(nil, nil) != 1 {
		t.Fatal("two empty sets must have similarity 1")
	}
}
