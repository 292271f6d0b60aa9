package sample

import (
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/sketch"
)

// TestSketcherEquivalence: a Sketcher gives exactly what the separate
// stages give (rabin fingerprint, extractor, sampler, Config.Size), for
// unweighted and weighted samplers, text and HTML bodies.
func TestSketcherEquivalence(t *testing.T) {
	bodies := []string{
		"", "one", strings.Repeat("the quick brown fox jumps over the lazy dog ", 20),
		"<html><head><title>T</title></head><body><h1>Head</h1> some body text here and there</body></html>",
	}
	for _, c := range []Config{
		{}, {Algorithm: sketch.MinHash, K: 32, Seed: 3},
		{Algorithm: sketch.CWS, K: 16, Features: feature.Options{Weighting: feature.WeightCount}},
		{Algorithm: sketch.HMTDep, K: 16, Features: feature.Options{Weighting: feature.WeightCount, Format: feature.FormatText}},
	} {
		s, err := NewSketcher(c)
		if err != nil {
			t.Fatal(err)
		}
		smp, _ := New(c)
		fo := c.Features
		ex, _ := feature.New(fo)
		fo.Format = feature.FormatHTML
		exHTML, _ := feature.New(fo)
		if c.Features.Format != feature.FormatAuto {
			exHTML = ex
		}
		var out Sketched
		for _, b := range bodies {
			for _, html := range []bool{false, true} {
				s.Sketch(&out, []byte(b), html)
				e := ex
				if html {
					e = exHTML
				}
				fs := e.Extract(nil, []byte(b))
				c2 := c
				c2.EnsureDefaults()
				if out.Fingerprint != identity.New(identity.Key{}).Sum([]byte(b)) || !slices.Equal(out.Features, fs) ||
					!slices.Equal(out.Values, smp.Sketch(nil, fs)) || out.Size != c2.Size(fs) || s.Header() != smp.Header() {
					t.Errorf("%+v %q html=%v: Sketcher differs from the stages", c, b, html)
				}
				sk := out.Sketch(s.Header())
				if err := sk.Validate(); err != nil {
					t.Errorf("%+v: %v", c, err)
				}
			}
		}
		var again Sketched
		s.SketchFeatures(&again, out.Features)
		if !slices.Equal(again.Values, out.Values) || again.Size != out.Size {
			t.Errorf("%+v: SketchFeatures differs from Sketch", c)
		}
	}
	if _, err := NewSketcher(Config{K: -1}); err == nil {
		t.Error("NewSketcher accepted k = -1")
	}
}

// TestSketcherAllocs: warm, Sketch allocates nothing.
func TestSketcherAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	s, err := NewSketcher(Config{})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog and runs ", 50))
	var out Sketched
	s.Sketch(&out, body, false)
	if n := testing.AllocsPerRun(50, func() { s.Sketch(&out, body, false) }); n != 0 {
		t.Errorf("Sketch allocates %v times per document when warm", n)
	}
}

// BenchmarkSketcher: the whole per-document cost from body to sketch
// (fingerprint, 5-shingle extraction, OPH k=128) of a 1,000-word text.
//
//	go test ./sample -run '^$' -bench Sketcher -cpu 1
func BenchmarkSketcher(b *testing.B) {
	s, err := NewSketcher(Config{})
	if err != nil {
		b.Fatal(err)
	}
	var words []string
	for i := 0; i < 1000; i++ {
		words = append(words, []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda"}[i*7%11]+string(rune('a'+i%26)))
	}
	body := []byte(strings.Join(words, " "))
	var out Sketched
	s.Sketch(&out, body, false)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	c0 := cpuNanos()
	for b.Loop() {
		s.Sketch(&out, body, false)
	}
	if c := cpuNanos() - c0; c > 0 {
		// Process CPU time: the figure to trust on a loaded machine (run
		// with -cpu 1).
		b.ReportMetric(1e9*float64(b.N)/float64(c), "cpu-docs/s")
	}
}
