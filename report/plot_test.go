package report

import (
	"bytes"
	"errors"
	"image/png"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
)

// plots renders each kind of plot in format.
func plots(t *testing.T, format string) map[string][]byte {
	t.Helper()
	s := rng.New(rng.Key(7, 'p', 'l', 'o', 't'))
	exact := make([]float64, 300)
	est := make([]float64, 100)
	for i := range exact {
		exact[i] = 0.8 + 0.2*s.Float64()
	}
	for i := range est {
		est[i] = 0.75 + 0.25*s.Float64()
	}
	small := []int{2, 2, 2, 2, 3, 3, 5, 9}
	wide := []int{2, 2, 2, 3, 4, 17, 130, 1000}
	out := map[string][]byte{}
	var b bytes.Buffer
	run := func(name string, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = bytes.Clone(b.Bytes())
		b.Reset()
	}
	run("hist", Histogram(&b, format, "similarity", exact, 20))
	run("stacked", StackedHistogram(&b, format, Chart{Title: "pairs"}, 0.7, 1, 30,
		Series{"exact", exact}, Series{"estimated", est}, Series{"identical", []float64{1, 1}}))
	run("sizes", SizeDistribution(&b, format, Chart{}, small))
	run("sizes-wide", SizeDistribution(&b, format, Chart{}, wide))
	run("scurve", SCurve(&b, format, Chart{}, []lsh.Params{lsh.AltaVista(), lsh.Bing()}, 0.8))
	return out
}

// TestSVGDeterministic renders every plot twice: the SVG bytes must be
// identical, and they must be an SVG document naming the series.
func TestSVGDeterministic(t *testing.T) {
	a, b := plots(t, SVG), plots(t, SVG)
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s: two renderings differ", name)
		}
		if !bytes.Contains(x, []byte("<svg")) || !bytes.HasSuffix(bytes.TrimSpace(x), []byte("</svg>")) {
			t.Errorf("%s: not an SVG document", name)
		}
	}
	if !bytes.Contains(a["stacked"], []byte("estimated")) {
		t.Error("stacked histogram lacks its legend")
	}
	if !bytes.Contains(a["scurve"], []byte("k=84 r=14 b=6 m=2")) {
		t.Error("S-curve legend lacks the scheme")
	}
}

// TestPNGDecodes renders PNGs and decodes them: the size follows the chart
// size and DPI.
func TestPNGDecodes(t *testing.T) {
	for name, x := range plots(t, PNG) {
		img, err := png.Decode(bytes.NewReader(x))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// 6 × 3.5 in at 96 DPI.
		if r := img.Bounds(); r.Dx() != 576 || r.Dy() != 336 {
			t.Errorf("%s: %v, want 576x336", name, r)
		}
	}
}

func TestPlotErrors(t *testing.T) {
	var b bytes.Buffer
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"format", Histogram(&b, "gif", "", []float64{1}, 1), ErrFormat},
		{"empty", Histogram(&b, SVG, "", nil, 10), ErrInput},
		{"bins", Histogram(&b, SVG, "", []float64{1}, 0), ErrInput},
		{"sizes", SizeDistribution(&b, SVG, Chart{}, []int{0}), ErrInput},
		{"curves", Curves(&b, SVG, Chart{}, nil, 0.5), ErrInput},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, c.err, c.want)
		}
	}
	// A single value: the range is widened around it, not divided by zero.
	if err := Histogram(&b, SVG, "", []float64{0.9, 0.9}, 5); err != nil || !strings.Contains(b.String(), "<svg") {
		t.Errorf("single value: %v", err)
	}
}
