// Package lshplot provides S-curve plots of supershingle schemes: the
// exact detection probability P(J) of lsh.Params against Jaccard
// similarity, with the threshold marked, drawn with gonum/plot.
//
// The S-curve is how a scheme is judged (book 3.2, figures 3.1 and 3.2):
// the area under the curve left of the threshold is the false-positive
// rate paid in verification, the area above it to the right the recall
// lost. It lives apart from package lsh so that key generation does not
// pull in a plotting library. It is not a report generator: it draws one
// figure.
package lshplot

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/neardup/neardup/lsh"
)

// Curve is one scheme to draw, with its legend label (default: the
// parameters).
type Curve struct {
	Params lsh.Params
	Label  string
}

// Options configure SCurve. The zero value draws a 6×4 inch PNG without a
// threshold line.
type Options struct {
	// Threshold draws a vertical line at this similarity when in (0, 1).
	Threshold float64
	// Format is the image format: "png" (default), "svg", "pdf" or "eps".
	Format string
	// Width and Height of the figure; defaults 6 and 4 inches.
	Width, Height vg.Length
	// Log plots P(J) on a logarithmic axis (book figure 3.2) from 1e-6.
	Log bool
	// Title defaults to "Detection probability P(J)".
	Title string
}

// SCurve draws P(J) for each curve (200 points each) and writes the image
// to w. Cost: a few milliseconds plus encoding.
func SCurve(w io.Writer, o Options, curves ...Curve) error {
	if len(curves) == 0 {
		return fmt.Errorf("lshplot: no curves")
	}
	if o.Format == "" {
		o.Format = "png"
	}
	if o.Width == 0 {
		o.Width = 6 * vg.Inch
	}
	if o.Height == 0 {
		o.Height = 4 * vg.Inch
	}
	if o.Title == "" {
		o.Title = "Detection probability P(J)"
	}
	p := plot.New()
	p.Title.Text = o.Title
	p.X.Label.Text = "Jaccard similarity J"
	p.Y.Label.Text = "P(candidate)"
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min, p.Y.Max = 0, 1
	if o.Log {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min = 1e-6
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	p.Legend.Left = true
	for i, c := range curves {
		if err := c.Params.Validate(); err != nil {
			return err
		}
		pts := make(plotter.XYs, 0, 201)
		for k := 0; k <= 200; k++ {
			j := float64(k) / 200
			y := c.Params.Prob(j)
			if o.Log && y < 1e-6 {
				continue
			}
			pts = append(pts, plotter.XY{X: j, Y: y})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("lshplot: %w", err)
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		p.Add(line)
		label := c.Label
		if label == "" {
			label = c.Params.String()
		}
		p.Legend.Add(label, line)
	}
	if o.Threshold > 0 && o.Threshold < 1 {
		lo := 0.0
		if o.Log {
			lo = 1e-6
		}
		th, err := plotter.NewLine(plotter.XYs{{X: o.Threshold, Y: lo}, {X: o.Threshold, Y: 1}})
		if err != nil {
			return fmt.Errorf("lshplot: %w", err)
		}
		th.Color = color.Gray{Y: 120}
		th.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(th)
		p.Legend.Add(fmt.Sprintf("threshold %.2f", o.Threshold), th)
	}
	wt, err := p.WriterTo(o.Width, o.Height, o.Format)
	if err != nil {
		return fmt.Errorf("lshplot: %w", err)
	}
	_, err = wt.WriteTo(w)
	return err
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}
