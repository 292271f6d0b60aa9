package report

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

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

// TestLogTickLabels checks that every labelled power of ten reads as a
// short decimal or 1e±n, whatever the float arithmetic gives, over the
// ranges the plots use.
func TestLogTickLabels(t *testing.T) {
	ok := regexp.MustCompile(`^(0\.0{0,2}1|10{0,4}|1e-?[0-9]+)$`)
	want := map[string]float64{"1e-6": 1e-6, "1e-5": 1e-5, "1e-4": 1e-4, "0.001": 1e-3, "0.01": 0.01, "0.1": 0.1, "1": 1, "10": 10, "10000": 1e4, "1e5": 1e5}
	for _, r := range [][2]float64{{1e-6, 1}, {1e-12, 1}, {0.5, 1000}, {2, 1 << 20}, {1e-5, 1e5}, {0.5, 0.9}} {
		labels := 0
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Value < r[0]*(1-1e-9) || tk.Value > r[1]*(1+1e-9) {
				t.Errorf("range %v: tick %v outside", r, tk.Value)
			}
			if tk.Label == "" {
				continue
			}
			labels++
			if !ok.MatchString(tk.Label) {
				t.Errorf("range %v: label %q", r, tk.Label)
			}
			if v, known := want[tk.Label]; known && v != tk.Value {
				t.Errorf("label %q marks %v", tk.Label, tk.Value)
			}
		}
		if decades := math.Log10(r[1] / r[0]); decades >= 1 && (labels < 2 || labels > 9) {
			t.Errorf("range %v: %d labels", r, labels)
		}
	}
	for e, s := range map[int]string{-7: "1e-7", -4: "1e-4", -3: "0.001", -1: "0.1", 0: "1", 2: "100", 4: "10000", 5: "1e5"} {
		if got := decade(e); got != s {
			t.Errorf("decade(%d) = %q, want %q", e, got, s)
		}
	}
}

// TestLegendOutsideData draws each kind of plot on a recording canvas and
// checks that every legend text lies below the data area (and its x axis),
// inside the image.
func TestLegendOutsideData(t *testing.T) {
	c := Chart{Marks: []Mark{{0.85, "mark"}}}
	cases := map[string]func() (*figure, error){
		"stacked": func() (*figure, error) {
			return stackedFigure(c, 0, 1, 50, []Series{{"exact", []float64{0.81, 0.9}}, {"estimated", []float64{0.95}}})
		},
		"sizes": func() (*figure, error) { return sizeFigure(c, []int{2, 3, 3}) },
		"curves": func() (*figure, error) {
			return curvesFigure(Chart{}, []Curve{{"one", func(j float64) float64 { return j }}, {"two", func(j float64) float64 { return j * j }}}, 0.8)
		},
		"log curves": func() (*figure, error) {
			return curvesFigure(Chart{LogY: true, Width: 3 * vg.Inch}, []Curve{{strings.Repeat("a long name ", 4), func(j float64) float64 { return math.Pow(j, 20) }}, {"b", lsh.Bing().Prob}}, 0.8)
		},
	}
	for name, mk := range cases {
		f, err := mk()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var rec recorder.Canvas
		w, h := f.c.Width, f.c.Height
		f.draw(draw.NewCanvas(&rec, w, h))
		legend := map[string]bool{}
		for _, e := range f.legend {
			legend[e.label] = true
		}
		var axisBottom vg.Length = h // lowest tick or axis label
		var legendTop vg.Length      // highest legend text
		found := 0
		for _, a := range rec.Actions {
			fs, ok := a.(*recorder.FillString)
			if !ok || fs.String == f.c.YLabel { // the y label is drawn rotated
				continue
			}
			if fs.Point.X < 0 || fs.Point.X > w || fs.Point.Y < 0 || fs.Point.Y > h {
				t.Errorf("%s: text %q at %v outside the %vx%v image", name, fs.String, fs.Point, w, h)
			}
			if legend[fs.String] {
				found++
				legendTop = max(legendTop, fs.Point.Y+fs.Size/2)
			} else {
				axisBottom = min(axisBottom, fs.Point.Y)
			}
		}
		if found != len(f.legend) || found == 0 {
			t.Fatalf("%s: %d legend texts drawn, want %d", name, found, len(f.legend))
		}
		if legendTop > axisBottom {
			t.Errorf("%s: legend reaches y=%v, above the axis texts at y=%v", name, legendTop, axisBottom)
		}
	}
}
