package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/weighted"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// mmtSizes are the document lengths of the MMT figures.
var mmtSizes = []int{10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000}

// mmtRow holds the work per sample function for one document length n of
// equal weights (Manasse, McSherry and Talwar, "Consistent Weighted
// Sampling", Figures 1 and 2).
type mmtRow struct {
	n                     int
	inversions, zExact    float64 // Figure 1: exact CWS
	changes, viable       float64 // Figure 2: best-hash changes, viable full β
	adaptive, oblivious   float64 // Figure 2: full β drawn by the 3.5 schemes
	bitsAdaptive, bitsObl float64 // random bits of β per (feature, sample)
}

// mmtFigures computes Figures 1 and 2 with k sample functions and writes
// mmt.tsv, mmt_fig1.png and mmt_fig2.png to dir.
func mmtFigures(dir string, k int, w io.Writer) error {
	exact, _ := weighted.NewCWS(weighted.Options{K: k, Seed: 1})
	obl, _ := weighted.NewCWS(weighted.Options{K: k, Seed: 1, Beta: weighted.BetaOblivious})
	ad, _ := weighted.NewCWS(weighted.Options{K: k, Seed: 1, Beta: weighted.BetaUnary})
	var rows []mmtRow
	fmt.Fprintf(w, "# MMT Figures 1 and 2: work per sample function, equal weights, k = %d\n", k)
	fmt.Fprintln(w, "n\tln_n\tinversions\tz_exact\tbest_changes\tviable_full_beta\tadaptive_full_beta\toblivious_full_beta\tadaptive_bits_per_pair\toblivious_bits_per_pair")
	for _, n := range mmtSizes {
		fs := make([]feature.Feature, n)
		for i := range fs {
			fs[i] = feature.Feature{ID: uint64(i)*0x9e3779b97f4a7c15 + 1, Weight: 1}
		}
		ce, co, ca := exact.Count(fs), obl.Count(fs), ad.Count(fs)
		per := func(x int) float64 { return float64(x) / float64(k) }
		r := mmtRow{n: n, inversions: per(ce.Inversions), zExact: per(ce.ZExact), changes: per(ce.BestChanges),
			viable: per(ce.ZExact), adaptive: per(ca.BetaFull), oblivious: per(co.BetaFull),
			bitsAdaptive: float64(ca.BetaBits) / float64(ca.Pairs), bitsObl: float64(co.BetaBits) / float64(co.Pairs)}
		rows = append(rows, r)
		fmt.Fprintf(w, "%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.3f\t%.3f\n", n, math.Log(float64(n)), r.inversions, r.zExact,
			r.changes, r.viable, r.adaptive, r.oblivious, r.bitsAdaptive, r.bitsObl)
	}
	type series struct {
		name string
		get  func(mmtRow) float64
	}
	for _, fig := range []struct {
		file, title string
		s           []series
	}{
		{"mmt_fig1.png", "MMT Figure 1: numerical inversions and exact z per sample", []series{
			{"inversions", func(r mmtRow) float64 { return r.inversions }},
			{"exact z (3.4)", func(r mmtRow) float64 { return r.zExact }},
			{"ln n", func(r mmtRow) float64 { return math.Log(float64(r.n)) }}}},
		{"mmt_fig2.png", "MMT Figure 2: approximate β schemes, per sample", []series{
			{"best hash changes", func(r mmtRow) float64 { return r.changes }},
			{"viable full β", func(r mmtRow) float64 { return r.viable }},
			{"adaptive (unary) full β", func(r mmtRow) float64 { return r.adaptive }},
			{"oblivious (8-bit) full β", func(r mmtRow) float64 { return r.oblivious }}}},
	} {
		p := plot.New()
		p.Title.Text = fig.title
		p.X.Label.Text = "document length n (equal weights)"
		p.Y.Label.Text = "count per sample function"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		for si, s := range fig.s {
			xy := make(plotter.XYs, len(rows))
			for i, r := range rows {
				xy[i].X, xy[i].Y = float64(r.n), math.Max(s.get(r), 1e-3)
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			l.Color, pts.Color = mmtColor(si), mmtColor(si)
			p.Add(l, pts)
			p.Legend.Add(s.name, l, pts)
		}
		p.Legend.Top, p.Legend.Left = true, true
		if err := p.Save(7*vg.Inch, 4*vg.Inch, filepath.Join(dir, fig.file)); err != nil {
			return err
		}
	}
	return nil
}

func mmtColor(i int) color.Color {
	if i < 3 {
		return plotColor(i)
	}
	return color.RGBA{R: 44, G: 160, B: 44, A: 255}
}
