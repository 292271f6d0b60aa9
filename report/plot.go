package report

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgeps"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/neardup/neardup/lsh"
)

// Output formats of the plotting functions.
const (
	// SVG is deterministic: the same input gives byte-identical output.
	// Fonts are named, not embedded: Liberation Sans, with the
	// metric-compatible Arial and Helvetica as fallbacks.
	SVG = "svg"
	// PNG renders at Chart.DPI.
	PNG = "png"
	// PDF embeds its fonts.
	PDF = "pdf"
	// EPS is Encapsulated PostScript.
	EPS = "eps"
)

// Errors returned by this package.
var (
	// ErrFormat reports an output format other than SVG, PNG, PDF and EPS.
	ErrFormat = errors.New("report: unsupported format")
	// ErrInput reports unusable plot input (no values, bad bins, NaN).
	ErrInput = errors.New("report: invalid plot input")
)

// Chart sets a plot's title, axis labels, size, scale and marks. The zero
// value gives an untitled 6 × 3.5 inch plot with each function's default
// labels and a linear y axis, at 96 DPI for PNG.
//
// Every plot keeps its legend out of the data area: in a band below the
// x axis, its entries side by side, wrapped into as many rows as the width
// needs.
type Chart struct {
	// Title is drawn above the plot. The default is none.
	Title string
	// XLabel and YLabel label the axes. The defaults depend on the plot.
	XLabel, YLabel string
	// Width and Height are the plot's size, legend included. The defaults
	// are 6 and 3.5 inches.
	Width, Height vg.Length
	// DPI is the PNG resolution. The default is 96.
	DPI int
	// LogY puts the y axis on a logarithmic scale labelled at powers of
	// ten. Histograms then draw their bars from 0.5 up, so that a count of
	// one shows; Curves and SCurve draw P(J) from MinY to 1 (as in figure
	// 3.2 of the book), leaving out what lies below. SizeDistribution's
	// count axis is logarithmic either way. The default is linear.
	LogY bool
	// MinY is the bottom of a logarithmic probability axis (Curves and
	// SCurve with LogY). The default is 1e-6.
	MinY float64
	// Marks are dashed vertical lines at given x values, each with a
	// legend entry. The default is none.
	Marks []Mark
	// Colors are the colours of StackedHistogram's series, in order. The
	// default (and a nil entry) is a colour-blind-safe palette.
	Colors []color.Color
}

// Mark is a dashed vertical line across a plot at X, named in the legend
// by Label (no entry when Label is empty).
type Mark struct {
	X     float64
	Label string
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
	if c.MinY <= 0 || c.MinY >= 1 {
		c.MinY = 1e-6
	}
	return c
}

// The plots' fonts: a sans-serif face, as the report's page uses.
var (
	sans       = font.Font{Typeface: "Liberation", Variant: "Sans"}
	labelFont  = font.From(sans, 12)
	tickFont   = font.From(sans, 10)
	legendFont = font.From(sans, 11)
)

// figure is a plot with its legend, which render draws outside the data
// area.
type figure struct {
	c      Chart
	p      *plot.Plot
	legend []legendEntry
}

type legendEntry struct {
	label string
	thumb plot.Thumbnailer
}

func (c Chart) newFigure() *figure {
	p := plot.New()
	p.Title.Text = c.Title
	p.Title.TextStyle.Font = font.From(sans, 13)
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = labelFont
		a.Tick.Label.Font = tickFont
	}
	p.Add(plotter.NewGrid())
	return &figure{c: c, p: p}
}

func (f *figure) addLegend(label string, thumb plot.Thumbnailer) {
	f.legend = append(f.legend, legendEntry{label, thumb})
}

// addMarks draws the chart's marks (after the data, so that they stay
// visible over bars).
func (f *figure) addMarks() {
	for _, m := range f.c.Marks {
		v := vline{x: m.X}
		f.p.Add(v)
		if m.Label != "" {
			f.addLegend(m.Label, v)
		}
	}
}

// Legend layout, in points.
const (
	legendThumb = 18 // thumbnail width
	legendGap   = 5  // between a thumbnail and its text
	legendSpace = 16 // between entries
	legendPad   = 6  // above and below the band
)

// legendLayout places the legend's entries in rows of at most width
// points: each entry's x offset and row, and the number of rows.
func (f *figure) legendLayout(width vg.Length) (xs []vg.Length, row []int, rows int) {
	sty := f.textStyle(legendFont)
	var x vg.Length
	r := 0
	for i, e := range f.legend {
		w := legendThumb + legendGap + sty.Width(e.label)
		if i > 0 && x+w > width {
			x, r = 0, r+1
		}
		xs, row = append(xs, x), append(row, r)
		x += w + legendSpace
	}
	if len(f.legend) > 0 {
		rows = r + 1
	}
	return xs, row, rows
}

func (f *figure) textStyle(fnt font.Font) draw.TextStyle {
	sty := f.p.Legend.TextStyle
	sty.Font = fnt
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	return sty
}

// draw draws the plot, and its legend in a band below it, on c.
func (f *figure) draw(c draw.Canvas) {
	sty := f.textStyle(legendFont)
	lineH := sty.Height("Mg") * 1.35
	// The legend is aligned with the data area; its width is known only
	// once the band's height is, which depends on the rows: two passes
	// settle it (the y axis's width does not depend on the height).
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	// A little room around keeps the highest and rightmost tick labels,
	// centred on the data area's edges, and the rotated y label (whose
	// line box a browser makes taller than its glyphs) inside the image.
	c = draw.Crop(c, 4, -4, 0, -6)
	data := f.p.DataCanvas(c)
	_, _, rows := f.legendLayout(c.Max.X - data.Min.X)
	band := vg.Length(0)
	if rows > 0 {
		band = vg.Length(rows)*lineH + 2*legendPad
	}
	pc := draw.Crop(c, 0, 0, band, 0)
	f.p.Draw(pc)
	if rows == 0 {
		return
	}
	data = f.p.DataCanvas(pc)
	xs, row, _ := f.legendLayout(c.Max.X - data.Min.X)
	top := c.Min.Y + band - legendPad
	for i, e := range f.legend {
		x0 := data.Min.X + xs[i]
		yc := top - (vg.Length(row[i])+0.5)*lineH
		h := sty.Height("M")
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0, Y: yc - h/2},
			Max: vg.Point{X: x0 + legendThumb, Y: yc + h/2},
		}}
		e.thumb.Thumbnail(&icon)
		c.FillText(sty, vg.Point{X: x0 + legendThumb + legendGap, Y: yc}, e.label)
	}
}

// render draws f on a canvas of the requested format and writes it to w.
func render(w io.Writer, format string, f *figure) error {
	c := f.c
	var cv vg.CanvasWriterTo
	switch format {
	case SVG:
		cv = vgsvg.New(c.Width, c.Height)
	case PNG:
		cv = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(c.Width, c.Height), vgimg.UseDPI(c.DPI))}
	case PDF:
		cv = vgpdf.New(c.Width, c.Height)
	case EPS:
		cv = vgeps.New(c.Width, c.Height)
	default:
		return fmt.Errorf("%w: %q (want %q, %q, %q or %q)", ErrFormat, format, SVG, PNG, PDF, EPS)
	}
	f.draw(draw.New(cv))
	if format != SVG {
		_, err := cv.WriteTo(w)
		return err
	}
	var b bytes.Buffer
	if _, err := cv.WriteTo(&b); err != nil {
		return err
	}
	_, err := w.Write(bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"), svgSans))
	return err
}

// svgSans names the fallbacks of Liberation Sans with the same metrics, so
// that a viewer without it lays the text out as it was measured.
var svgSans = []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")

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

// markStyle is the style of Marks: dashed, dark grey.
var markStyle = draw.LineStyle{
	Color:  color.Gray{Y: 70},
	Width:  vg.Points(1.2),
	Dashes: []vg.Length{vg.Points(5), vg.Points(3)},
}

// vline is a Mark: a vertical line across the data area at x. It has no
// data range, so it never widens the axes.
type vline struct{ x float64 }

func (v vline) Plot(c draw.Canvas, p *plot.Plot) {
	if v.x < p.X.Min || v.x > p.X.Max {
		return
	}
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	c.StrokeLine2(markStyle, x, c.Min.Y, x, c.Max.Y)
}

func (v vline) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(markStyle, c.Min.X, y, c.Max.X, y)
}

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

// logTicks labels a logarithmic axis at powers of ten, with unlabelled
// minor ticks at 2…9 times them. Labels are written from the exponent, not
// from the float value, so they read 0.001 or 1e-5, never
// 9.999999999999999e-05: plain decimals from 0.001 to 10000, 1e±n beyond.
// With more than eight decades only every second (third…) is labelled.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi > lo) {
		return nil
	}
	e0, e1 := int(math.Floor(math.Log10(lo)+1e-9)), int(math.Ceil(math.Log10(hi)-1e-9))
	step := max(1, (e1-e0+7)/8)
	in := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	var ts []plot.Tick
	for e := e0; e <= e1; e++ {
		v := math.Pow10(e)
		if in(v) {
			t := plot.Tick{Value: v}
			if (e-e0)%step == 0 {
				t.Label = decade(e)
			}
			ts = append(ts, t)
		}
		for k := 2; k <= 9; k++ {
			if m := float64(k) * v; in(m) {
				ts = append(ts, plot.Tick{Value: m})
			}
		}
	}
	return ts
}

// decade formats 10^e: "0.001", "1", "10000", "1e-5", "1e6".
func decade(e int) string {
	switch {
	case e >= 0 && e <= 4:
		return "1" + "0000"[:e]
	case e < 0 && e >= -3:
		return "0." + "000"[:-e-1] + "1"
	}
	return "1e" + strconv.Itoa(e)
}

// unitTicks labels [0, 1] every 0.1 ("0", "0.1", … "1"), with minor ticks
// every 0.05.
type unitTicks struct{}

func (unitTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for i := 0; i <= 20; i++ {
		v := float64(i) / 20
		if v < lo-1e-9 || v > hi+1e-9 {
			continue
		}
		t := plot.Tick{Value: v}
		if i%2 == 0 {
			t.Label = strconv.FormatFloat(float64(i/2)/10, 'f', -1, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// Series is a named set of values for StackedHistogram.
type Series struct {
	Name   string
	Values []float64
}

// Histogram writes a histogram of values in bins equal bins between their
// minimum and maximum, in format (SVG, PNG, PDF or EPS), titled title. It
// is StackedHistogram with one unnamed series. Cost: O(len(values) +
// bins).
func Histogram(w io.Writer, format, title string, values []float64, bins int) error {
	return StackedHistogram(w, format, Chart{Title: title}, 0, 0, bins, Series{Values: values})
}

// StackedHistogram writes a histogram of several series stacked in each
// bin, one colour per series with a legend of their names: bins equal bins
// over [lo, hi] (a value equal to hi falls in the last bin; values outside
// are left out). When lo >= hi the range is the data's minimum and maximum.
// The range [0, 1] is labelled every 0.1. The default axis labels are
// "value" and "count". Cost: O(values + bins).
func StackedHistogram(w io.Writer, format string, c Chart, lo, hi float64, bins int, series ...Series) error {
	f, err := stackedFigure(c, lo, hi, bins, series)
	if err != nil {
		return err
	}
	return render(w, format, f)
}

func stackedFigure(c Chart, lo, hi float64, bins int, series []Series) (*figure, error) {
	c = c.withDefaults("value", "count")
	if bins < 1 || bins > 1<<16 {
		return nil, fmt.Errorf("%w: %d bins", ErrInput, bins)
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
				return nil, fmt.Errorf("%w: series %q holds %v", ErrInput, s.Name, v)
			}
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no values", ErrInput)
	}
	if lo == hi {
		lo, hi = lo-0.5, hi+0.5
	}
	const logBase = 0.5 // log-scale bars start below 1 so that a count of 1 shows
	width := (hi - lo) / float64(bins)
	base := make([]float64, bins)
	b := &bars{}
	f := c.newFigure()
	for si, s := range series {
		fill := colorOf(si)
		if si < len(c.Colors) && c.Colors[si] != nil {
			fill = c.Colors[si]
		}
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
				y0 := base[i]
				if c.LogY && y0 == 0 {
					y0 = logBase
				}
				b.rects = append(b.rects, rect{x0, x0 + width, y0, base[i] + k, fill})
				base[i] += k
			}
		}
		if s.Name != "" {
			f.addLegend(s.Name, swatch{fill})
		}
	}
	p := f.p
	p.Add(b)
	f.addMarks()
	p.X.Min, p.X.Max = lo, hi
	if lo == 0 && hi == 1 {
		p.X.Tick.Marker = unitTicks{}
	}
	top := math.Max(1, slices.Max(base))
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min = logBase
		p.Y.Max = math.Pow(10, math.Ceil(math.Log10(top)+0.05))
	} else {
		p.Y.Min = 0
		p.Y.Max = top * 1.05
	}
	return f, nil
}

// SizeDistribution writes the distribution of sizes (cluster sizes, any
// positive integers): the number of items of each size, on a logarithmic
// count axis. Up to 40 distinct sizes get one bar each; wider ranges are
// binned by powers of two ([2,3], [4,7], [8,15], …) on a logarithmic size
// axis. The default labels are "size" and "count". Cost: O(len(sizes)).
func SizeDistribution(w io.Writer, format string, c Chart, sizes []int) error {
	f, err := sizeFigure(c, sizes)
	if err != nil {
		return err
	}
	return render(w, format, f)
}

func sizeFigure(c Chart, sizes []int) (*figure, error) {
	c = c.withDefaults("size", "count")
	if len(sizes) == 0 {
		return nil, fmt.Errorf("%w: no sizes", ErrInput)
	}
	counts := map[int]int{}
	hi := 0
	for _, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("%w: size %d", ErrInput, s)
		}
		counts[s]++
		hi = max(hi, s)
	}
	const base = 0.5 // bars start below 1 so that a count of 1 shows
	f := c.newFigure()
	p := f.p
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
		p.X.Tick.Marker = logTicks{}
		p.X.Min, p.X.Max = math.Ldexp(1, floorLog2(lo)), math.Ldexp(1, floorLog2(hi)+1)
	}
	p.Add(b)
	f.addMarks()
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min = base
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(float64(ymax))+0.05))
	return f, nil
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
// each named by its parameters. It is Curves for lsh.Params: the
// threshold is marked (when in (0, 1]) and each scheme's P at the
// threshold is in the legend; with c.LogY the axis is logarithmic, as the
// book draws these curves to show the false-positive tail (figure 3.2).
// Invalid parameters are an error. The default labels are "Jaccard
// similarity J" and "P(candidate)". Cost: 201 evaluations of Prob per
// scheme.
func SCurve(w io.Writer, format string, c Chart, params []lsh.Params, threshold float64) error {
	cs := make([]Curve, len(params))
	for i, p := range params {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		cs[i] = Curve{Name: p.String(), P: p.Prob}
	}
	return Curves(w, format, c, cs, threshold)
}

// Curves writes arbitrary curves P(J) for J in [0, 1] (201 points each),
// with the threshold marked as SCurve does. It is SCurve for curves that
// are not lsh.Params, or for naming them otherwise (a measured collision
// rate, a weighted scheme, "AltaVista").
func Curves(w io.Writer, format string, c Chart, curves []Curve, threshold float64) error {
	f, err := curvesFigure(c, curves, threshold)
	if err != nil {
		return err
	}
	return render(w, format, f)
}

func curvesFigure(c Chart, curves []Curve, threshold float64) (*figure, error) {
	c = c.withDefaults("Jaccard similarity J", "P(candidate)")
	if len(curves) == 0 {
		return nil, fmt.Errorf("%w: no curves", ErrInput)
	}
	mark := threshold > 0 && threshold <= 1
	if mark {
		c.Marks = append([]Mark{{threshold, "threshold " + strconv.FormatFloat(threshold, 'g', 4, 64)}}, c.Marks...)
	}
	f := c.newFigure()
	p := f.p
	const n = 200
	for i, cv := range curves {
		// On a log axis, values below MinY are left out: the line breaks
		// into the runs that can be shown.
		var runs []plotter.XYs
		var run plotter.XYs
		for k := 0; k <= n; k++ {
			j := float64(k) / n
			y := cv.P(j)
			if math.IsNaN(y) {
				return nil, fmt.Errorf("%w: curve %q is NaN at %v", ErrInput, cv.Name, j)
			}
			if c.LogY && y < c.MinY {
				if len(run) > 0 {
					runs, run = append(runs, run), nil
				}
				continue
			}
			run = append(run, plotter.XY{X: j, Y: y})
		}
		if len(run) > 0 {
			runs = append(runs, run)
		}
		style := draw.LineStyle{Color: colorOf(i), Width: vg.Points(1.8)}
		for _, r := range runs {
			l, err := plotter.NewLine(r)
			if err != nil {
				return nil, err
			}
			l.LineStyle = style
			p.Add(l)
		}
		name := cv.Name
		if mark {
			name += fmt.Sprintf(" (P = %.3f at %g)", cv.P(threshold), threshold)
		}
		f.addLegend(name, lineThumb(style))
	}
	f.addMarks()
	p.X.Min, p.X.Max = 0, 1
	p.X.Tick.Marker = unitTicks{}
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = c.MinY, 1
	} else {
		p.Y.Min, p.Y.Max = 0, 1.02
		p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"}, {Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}}
	}
	return f, nil
}

// lineThumb is a legend thumbnail: a short line.
type lineThumb draw.LineStyle

func (l lineThumb) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(draw.LineStyle(l), c.Min.X, y, c.Max.X, y)
}
