package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/neardup/neardup/lsh"
)

// Output formats of the plotting functions.
const (
	// SVG is deterministic: the same input gives byte-identical output.
	// Fonts are named, not embedded (the viewer substitutes its own).
	SVG = "svg"
	// PNG renders at Chart.DPI.
	PNG = "png"
)

// Errors returned by this package.
var (
	// ErrFormat reports an output format other than SVG and PNG.
	ErrFormat = errors.New("report: unsupported format")
	// ErrInput reports unusable plot input (no values, bad bins, NaN).
	ErrInput = errors.New("report: invalid plot input")
)

// Chart sets a plot's title, axis labels and size. The zero value gives an
// untitled 6 × 3.5 inch plot with each function's default labels, at 96 DPI
// for PNG.
type Chart struct {
	// Title is drawn above the plot. The default is none.
	Title string
	// XLabel and YLabel label the axes. The defaults depend on the plot.
	XLabel, YLabel string
	// Width and Height are the plot's size. The defaults are 6 and 3.5
	// inches.
	Width, Height vg.Length
	// DPI is the PNG resolution. The default is 96.
	DPI int
}

func (c Chart) withDefaults(x, y string) Chart {
	if c.Width <= 0 {
		c.Width = 6 * vg.Inch
	}
	if c.Height <= 0 {
		c.Height = 3.5 * vg.Inch
	}
	if c.DPI <= 0 {
		c.DPI = 96
	}
	if c.XLabel == "" {
		c.XLabel = x
	}
	if c.YLabel == "" {
		c.YLabel = y
	}
	return c
}

func (c Chart) newPlot() *plot.Plot {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = 0.5 * vg.Centimeter
	return p
}

// render draws p on a canvas of the requested format and writes it to w.
func render(w io.Writer, format string, c Chart, p *plot.Plot) error {
	var cv vg.CanvasWriterTo
	switch format {
	case SVG:
		cv = vgsvg.New(c.Width, c.Height)
	case PNG:
		cv = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(c.Width, c.Height), vgimg.UseDPI(c.DPI))}
	default:
		return fmt.Errorf("%w: %q (want %q or %q)", ErrFormat, format, SVG, PNG)
	}
	p.Draw(draw.New(cv))
	_, err := cv.WriteTo(w)
	return err
}

// palette holds the series colours: colour-blind-safe (Okabe–Ito).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{0, 158, 115, 255},   // green
	color.RGBA{204, 121, 167, 255}, // purple
	color.RGBA{86, 180, 233, 255},  // sky
	color.RGBA{213, 94, 0, 255},    // vermillion
}

func colorOf(i int) color.Color { return palette[i%len(palette)] }

// rect is one filled bar of the bars plotter.
type rect struct {
	x0, x1, y0, y1 float64
	fill           color.Color
}

// bars draws filled rectangles in data coordinates. gonum's bar and
// histogram plotters start every bar at zero, which a logarithmic axis
// cannot show; bars lets counts on a log axis start at a chosen base.
type bars struct{ rects []rect }

func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	line := draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.5)}
	for _, r := range b.rects {
		pts := []vg.Point{
			{X: trX(r.x0), Y: trY(r.y0)}, {X: trX(r.x1), Y: trY(r.y0)},
			{X: trX(r.x1), Y: trY(r.y1)}, {X: trX(r.x0), Y: trY(r.y1)},
		}
		c.FillPolygon(r.fill, c.ClipPolygonXY(pts))
		c.StrokeLines(line, c.ClipLinesXY(append(pts, pts[0]))...)
	}
}

func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, r := range b.rects {
		xmin, xmax = math.Min(xmin, r.x0), math.Max(xmax, r.x1)
		ymin, ymax = math.Min(ymin, math.Min(r.y0, r.y1)), math.Max(ymax, math.Max(r.y0, r.y1))
	}
	return
}

// swatch is a legend thumbnail: a filled box.
type swatch struct{ fill color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	}
	c.FillPolygon(s.fill, c.ClipPolygonXY(pts))
}

// Series is a named set of values for StackedHistogram.
type Series struct {
	Name   string
	Values []float64
}

// Histogram writes a histogram of values in bins equal bins between their
// minimum and maximum, in format (SVG or PNG), titled title. It is
// StackedHistogram with one unnamed series. Cost: O(len(values) + bins).
func Histogram(w io.Writer, format, title string, values []float64, bins int) error {
	return StackedHistogram(w, format, Chart{Title: title}, 0, 0, bins, Series{Values: values})
}

// StackedHistogram writes a histogram of several series stacked in each
// bin, one colour per series with a legend of their names: bins equal bins
// over [lo, hi] (a value equal to hi falls in the last bin; values outside
// are left out). When lo >= hi the range is the data's minimum and maximum.
// The default axis labels are "value" and "count". Cost: O(values + bins).
func StackedHistogram(w io.Writer, format string, c Chart, lo, hi float64, bins int, series ...Series) error {
	c = c.withDefaults("value", "count")
	if bins < 1 || bins > 1<<16 {
		return fmt.Errorf("%w: %d bins", ErrInput, bins)
	}
	n := 0
	if lo >= hi {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, s := range series {
			for _, v := range s.Values {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	for _, s := range series {
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: series %q holds %v", ErrInput, s.Name, v)
			}
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: no values", ErrInput)
	}
	if lo == hi {
		lo, hi = lo-0.5, hi+0.5
	}
	width := (hi - lo) / float64(bins)
	base := make([]float64, bins)
	b := &bars{}
	p := c.newPlot()
	for si, s := range series {
		counts := make([]float64, bins)
		for _, v := range s.Values {
			if v < lo || v > hi {
				continue
			}
			i := min(int((v-lo)/width), bins-1)
			counts[i]++
		}
		for i, k := range counts {
			if k > 0 {
				x0 := lo + float64(i)*width
				b.rects = append(b.rects, rect{x0, x0 + width, base[i], base[i] + k, colorOf(si)})
				base[i] += k
			}
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, swatch{colorOf(si)})
		}
	}
	p.Add(b)
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min = 0
	p.Y.Max = math.Max(1, slices.Max(base)) * 1.2 // room for the legend
	p.Add(plotter.NewGrid())
	return render(w, format, c, p)
}

// SizeDistribution writes the distribution of sizes (cluster sizes, any
// positive integers): the number of items of each size, on a logarithmic
// count axis. Up to 40 distinct sizes get one bar each; wider ranges are
// binned by powers of two ([2,3], [4,7], [8,15], …) on a logarithmic size
// axis. The default labels are "size" and "count". Cost: O(len(sizes)).
func SizeDistribution(w io.Writer, format string, c Chart, sizes []int) error {
	c = c.withDefaults("size", "count")
	if len(sizes) == 0 {
		return fmt.Errorf("%w: no sizes", ErrInput)
	}
	counts := map[int]int{}
	hi := 0
	for _, s := range sizes {
		if s < 1 {
			return fmt.Errorf("%w: size %d", ErrInput, s)
		}
		counts[s]++
		hi = max(hi, s)
	}
	const base = 0.5 // bars start below 1 so that a count of 1 shows
	p := c.newPlot()
	b := &bars{}
	keys := make([]int, 0, len(counts))
	for s := range counts {
		keys = append(keys, s)
	}
	slices.Sort(keys)
	lo := keys[0]
	ymax := 1
	if hi-lo < 40 {
		for _, s := range keys {
			b.rects = append(b.rects, rect{float64(s) - 0.4, float64(s) + 0.4, base, float64(counts[s]), colorOf(0)})
			ymax = max(ymax, counts[s])
		}
		p.X.Min, p.X.Max = float64(lo)-1, float64(hi)+1
		p.X.Tick.Marker = intTicks{}
	} else {
		bin := map[int]int{} // power-of-two bin → count
		for _, s := range keys {
			bin[floorLog2(s)] += counts[s]
		}
		for e := floorLog2(lo); e <= floorLog2(hi); e++ {
			if k := bin[e]; k > 0 {
				x0 := math.Ldexp(1, e)
				b.rects = append(b.rects, rect{x0 * 1.02, 2 * x0 / 1.02, base, float64(k), colorOf(0)})
				ymax = max(ymax, k)
			}
		}
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = math.Ldexp(1, floorLog2(lo)), math.Ldexp(1, floorLog2(hi)+1)
	}
	p.Add(b)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min = base
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(float64(ymax))+0.05))
	return render(w, format, c, p)
}

func floorLog2(x int) int { return int(math.Floor(math.Log2(float64(x)))) }

// intTicks labels integer positions, about ten of them.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	a, b := int(math.Ceil(lo)), int(math.Floor(hi))
	step := max(1, (b-a+9)/10)
	var ts []plot.Tick
	for v := a; v <= b; v++ {
		t := plot.Tick{Value: float64(v)}
		if (v-a)%step == 0 {
			t.Label = strconv.Itoa(v)
		}
		ts = append(ts, t)
	}
	return ts
}

// Curve is a named probability curve P(J) on [0, 1] for Curves.
type Curve struct {
	Name string
	P    func(j float64) float64
}

// SCurve writes the S-curves P(J) of LSH schemes, the probability that two
// documents of Jaccard similarity J become candidates (lsh.Params.Prob),
// with the threshold marked (when in (0, 1]) and each scheme's P at the
// threshold in the legend. The default labels are "Jaccard similarity J"
// and "P(candidate)". Cost: 201 evaluations of Prob per scheme.
func SCurve(w io.Writer, format string, c Chart, params []lsh.Params, threshold float64) error {
	cs := make([]Curve, len(params))
	for i, p := range params {
		cs[i] = Curve{Name: p.String(), P: p.Prob}
	}
	return Curves(w, format, c, cs, threshold)
}

// Curves writes arbitrary curves P(J) for J in [0, 1] (201 points each),
// with the threshold marked as SCurve does. It is SCurve for curves that
// are not lsh.Params (a measured collision rate, a weighted scheme).
func Curves(w io.Writer, format string, c Chart, curves []Curve, threshold float64) error {
	c = c.withDefaults("Jaccard similarity J", "P(candidate)")
	if len(curves) == 0 {
		return fmt.Errorf("%w: no curves", ErrInput)
	}
	p := c.newPlot()
	p.Legend.Left = true // the curves are near 0 at top left
	p.Add(plotter.NewGrid())
	mark := threshold > 0 && threshold <= 1
	if mark {
		l, err := plotter.NewLine(plotter.XYs{{X: threshold, Y: 0}, {X: threshold, Y: 1}})
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 90}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("threshold "+strconv.FormatFloat(threshold, 'g', 4, 64), l)
	}
	const n = 200
	for i, cv := range curves {
		pts := make(plotter.XYs, n+1)
		for k := range pts {
			j := float64(k) / n
			y := cv.P(j)
			if math.IsNaN(y) {
				return fmt.Errorf("%w: curve %q is NaN at %v", ErrInput, cv.Name, j)
			}
			pts[k] = plotter.XY{X: j, Y: y}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = colorOf(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		name := cv.Name
		if mark {
			name += fmt.Sprintf(" (P = %.3f at %g)", cv.P(threshold), threshold)
		}
		p.Legend.Add(name, l)
	}
	p.X.Min, p.X.Max = 0, 1
	// Headroom above P = 1 for the legend, which would otherwise cover
	// curves that rise early; ticks stop at 1.
	p.Y.Min, p.Y.Max = 0, 1+0.07*float64(len(curves)+1)
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"}, {Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}}
	return render(w, format, c, p)
}
