package weighted

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// sketchSampler is what this package's samplers share (sample.Sampler, plus
// LogWeights); the package cannot import sample, which imports it.
type sketchSampler interface {
	Header() sketch.Header
	Sketch([]uint64, []feature.Feature) []uint64
	LogWeights() bool
}

var _ = []sketchSampler{(*CWS)(nil), (*ICWS)(nil), (*HMT)(nil)}

// withSize is sample.Make's rule for weighted samplers: the sampler's
// header and values, the exact total weight as Size.
func withSize(s sketchSampler, fs []feature.Feature) *sketch.Sketch {
	return &sketch.Sketch{Header: s.Header(), Values: s.Sketch(nil, fs), Size: TotalWeight(fs, s.LogWeights())}
}

// TestTotalWeight: a sketch with the exact total weight as Size is valid,
// for every sampler and for logarithmic weights; absent weights count for
// nothing; overflowing totals give Size 0.
func TestTotalWeight(t *testing.T) {
	s := rng.New(3)
	fs := logUniform(&s, 50, 1e-3, 1e3)
	fs = append(fs, feature.Feature{ID: 1, Weight: 0}, feature.Feature{ID: 2, Weight: -5},
		feature.Feature{ID: 3, Weight: math.NaN()}, feature.Feature{ID: 4, Weight: math.Inf(1)})
	var want float64
	for _, f := range fs[:50] {
		want += f.Weight
	}
	c, _ := NewCWS(Options{K: 16, Seed: 1})
	ic, _ := NewICWS(Options{K: 16, Seed: 1})
	h, _ := NewHMT(Options{K: 16, Seed: 1})
	for _, smp := range []sketchSampler{c, ic, h} {
		sk := withSize(smp, fs)
		if sk.Header != smp.Header() || !slices.Equal(sk.Values, smp.Sketch(nil, fs)) || sk.Size != want {
			t.Errorf("%v: %+v, size want %v", smp.Header().Algorithm, sk.Header, want)
		}
		if err := sk.Validate(); err != nil {
			t.Error(err)
		}
		if e := withSize(smp, nil); len(e.Values) != 0 || e.Size != 0 {
			t.Errorf("empty: %+v", e)
		}
	}
	lh, _ := NewHMT(Options{K: 16, LogWeights: true})
	lfs := logWeights(fs[:50], 0)
	if got := withSize(lh, lfs).Size; math.Abs(got-want) > 1e-12*want {
		t.Errorf("log weights: size %v, want %v", got, want)
	}
	if got := withSize(lh, logWeights(fs[:50], 1000)).Size; got != 0 {
		t.Errorf("e^1000 total: size %v, want 0 (unknown)", got)
	}
	if got := TotalWeight([]feature.Feature{{ID: 1, Weight: math.MaxFloat64}, {ID: 2, Weight: math.MaxFloat64}}, false); got != 0 {
		t.Errorf("overflowing plain total %v, want 0", got)
	}
	// Containment of CWS sketches needs the sizes.
	if _, err := sketch.Containment(withSize(c, fs), withSize(c, fs[:25])); err != nil {
		t.Errorf("containment with sizes: %v", err)
	}
}

// TestHMTHeaderParams: the header packs the rounded options, which
// sketch.Header.HMT recovers; options that cannot be packed are refused.
func TestHMTHeaderParams(t *testing.T) {
	h, err := NewHMT(Options{K: 100, Alpha: 0.3, Tau: 2, Scales: 5, L: 4.3})
	if err != nil {
		t.Fatal(err)
	}
	p, bins, err := h.Header().HMT()
	if err != nil || p.Alpha != h.Alpha() || p.Tau != 2 || p.Scales != 5 || p.L != 4.3125 || bins != h.Bins() {
		t.Fatalf("%+v %d %v", p, bins, err)
	}
	for _, o := range []Options{{Scales: 64, Tau: 1}, {Alpha: 1e-9}, {Alpha: 1 - 1e-9}} {
		if _, err := NewHMT(o); !errors.Is(err, ErrOptions) {
			t.Errorf("NewHMT(%+v): %v", o, err)
		}
	}
}
