package main

import (
	"fmt"
	"image/color"
	"io"
	"log"
	"math"
	"path/filepath"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/weighted"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// HMT section 5's setup: "a single scaling version of our algorithm" that
// rounds each pair to about hmtPerBin·k elements ("1024 samples randomly
// assigned to 128 bins" at k = 128), Ioffe's ICWS with k samples, and the
// randomized rounding alone; full samples and 2-bit, 1-bit and ½-bit
// compressions, k from 64 to 512. We add the multi-scale HMT sketch at
// neardup's defaults (t = 3, τ = 1, L = 4) for the size row.
const hmtPerBin = 8

// variant is a compression: b bits per sample, or ½ bit (XOR pairs, b = 1).
type variant struct {
	name string
	b    int
	xor  bool
}

var variants = []variant{{"full", 64, false}, {"2-bit", 2, false}, {"1-bit", 1, false}, {"½-bit", 1, true}}

// bits returns the bits a variant stores per sample.
func (v variant) bits() float64 {
	if v.xor {
		return 0.5
	}
	return float64(v.b)
}

// hmtRow is one true-J level at one k: the error statistics of each
// method and variant (error = estimate − exact weighted Jaccard).
type hmtRow struct {
	k         int
	j         float64
	n         int
	icws      [4]stat // ICWS, per variant
	single    [4]stat // HMT single scale, per variant
	multi     [4]stat // HMT multi-scale (defaults), per variant
	round     stat    // exact Jaccard of the single-scale rounding
	ideal     float64
	multiBelw int
}

// hmtFigures runs the section-5 comparison for every k and writes
// hmt.tsv (through w), hmt_fig5_1_<variant>_k<k>.png, hmt_fig5_2_… and
// hmt_size.tsv to dir.
func hmtFigures(dir string, ks []int, pairs, n int, w, size io.Writer) error {
	var all [][]hmtRow
	fmt.Fprintf(w, "# HMT Figures 5.1 (MAE) and 5.2 (SD) — error = estimate − exact weighted J; %d pairs per level, n = %d features per document;\n", pairs, n)
	fmt.Fprintf(w, "# single = one scale, ≈%d·k rounded elements into k bins; multi = HMT sketch at t = 3, τ = 1, L = 4; round = exact Jaccard of the single-scale rounding\n", hmtPerBin)
	fmt.Fprintln(w, "k\tvariant\tJ\tMAE_icws\tMAE_single\tMAE_multi\tMAE_round\tbinomial_ideal\tSD_icws\tSD_single\tSD_multi\tSD_round\tbias_single\tmulti_below")
	for _, k := range ks {
		rows := hmtAccuracy(k, pairs, n)
		all = append(all, rows)
		for vi, v := range variants {
			for _, r := range rows {
				fmt.Fprintf(w, "%d\t%s\t%.3f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%+.4f\t%d\n", k, v.name, r.j,
					r.icws[vi].mae(r.n), r.single[vi].mae(r.n), r.multi[vi].mae(r.n), r.round.mae(r.n), r.ideal,
					r.icws[vi].sd(r.n), r.single[vi].sd(r.n), r.multi[vi].sd(r.n), r.round.sd(r.n), r.single[vi].sum/float64(r.n), r.multiBelw)
			}
			if err := plotHMT(dir, k, vi, rows); err != nil {
				return err
			}
		}
	}
	sizeRow(size, ks, all)
	return nil
}

// hmtAccuracy measures every method and variant at k over pairs pairs per
// true-J level.
func hmtAccuracy(k, pairs, n int) []hmtRow {
	rows := make([]hmtRow, len(levels))
	var va, vb []uint64
	for li, target := range levels {
		r := &rows[li]
		r.k, r.n = k, pairs
		for p := range pairs {
			a, b := pairAt(uint64(1000*li+p), n, target)
			// One scale for the pair: weights scaled so that a has total
			// weight hmtPerBin·k (section 5 sketches all pairs at one scale).
			c := float64(hmtPerBin*k) / total(a)
			a, b = scaleFS(a, c), scaleFS(b, c)
			j := weighted.Jaccard(a, b)
			r.j += j / float64(pairs)
			seed := uint64(p)
			ic, _ := weighted.NewICWS(weighted.Options{K: k, Seed: seed})
			single, _ := weighted.NewHMT(weighted.Options{K: k, Seed: seed, Scales: 2, Tau: 1}) // one block of k bins
			multi, _ := weighted.NewHMT(weighted.Options{K: k, Seed: seed})
			va, vb = ic.Sketch(va[:0], a), ic.Sketch(vb[:0], b)
			ia := &sketch.Sketch{Header: ic.Header(), Values: append([]uint64(nil), va...)}
			ib := &sketch.Sketch{Header: ic.Header(), Values: append([]uint64(nil), vb...)}
			ba, bb := single.SketchScale(nil, a, 0), single.SketchScale(nil, b, 0)
			ma := &sketch.Sketch{Header: multi.Header(), Values: multi.Sketch(nil, a)}
			mb := &sketch.Sketch{Header: multi.Header(), Values: multi.Sketch(nil, b)}
			for vi, v := range variants {
				r.icws[vi].add(must(icwsEstimate(ia, ib, v)) - j)
				r.single[vi].add(must(singleEstimate(ba, bb, seed, v)) - j)
				e := must(multiEstimate(ma, mb, v))
				if e.Below {
					r.multiBelw++
				}
				r.multi[vi].add(e.J - j)
			}
			r.round.add(jaccElems(single.Reduce(nil, a, 0), single.Reduce(nil, b, 0)) - j)
		}
		r.ideal = binomialMAE(k, r.j)
		log.Printf("hmt figures: k=%d J=%.2f done", k, target)
	}
	return rows
}

func must[T any](x T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return x
}

func icwsEstimate(a, b *sketch.Sketch, v variant) (float64, error) {
	if v.b == 64 {
		e, err := sketch.Jaccard(a, b)
		return e.J, err
	}
	comp := sketch.Compress
	if v.xor {
		comp = sketch.CompressPairs
	}
	ca, err := comp(a, v.b)
	if err != nil {
		return 0, err
	}
	cb, _ := comp(b, v.b)
	e, err := sketch.Jaccard(ca, cb)
	return e.J, err
}

func singleEstimate(a, b []uint64, seed uint64, v variant) (float64, error) {
	if v.b == 64 {
		e, err := sketch.BinsJaccard(a, b, 64, false)
		return e.J, err
	}
	// The seed argument of CompressBins is the sketch header's seed.
	ca, err := sketch.CompressBins(nil, a, seed, 0, v.b, v.xor)
	if err != nil {
		return 0, err
	}
	cb, _ := sketch.CompressBins(nil, b, seed, 0, v.b, v.xor)
	e, err := sketch.BinsJaccard(ca, cb, v.b, v.xor)
	return e.J, err
}

func multiEstimate(a, b *sketch.Sketch, v variant) (sketch.Estimate, error) {
	if v.b == 64 {
		return sketch.JaccardHMT(a, b, sketch.HMTOptions{AsWritten: true, Weighted: true})
	}
	comp := sketch.CompressHMT
	if v.xor {
		comp = sketch.CompressHMTPairs
	}
	ca, err := comp(a, v.b)
	if err != nil {
		return sketch.Estimate{}, err
	}
	cb, _ := comp(b, v.b)
	return sketch.JaccardHMT(ca, cb, sketch.HMTOptions{AsWritten: true, Weighted: true})
}

func total(fs []feature.Feature) float64 {
	var s float64
	for _, f := range fs {
		s += f.Weight
	}
	return s
}

func scaleFS(fs []feature.Feature, c float64) []feature.Feature {
	out := make([]feature.Feature, len(fs))
	for i, f := range fs {
		out[i] = feature.Feature{ID: f.ID, Weight: f.Weight * c}
	}
	return out
}

// sizeRow writes, per method and variant, the bytes of sample values a
// sketch needs for a root-mean-square error of 0.02 at J ≈ 0.9 and J ≈ 0.5,
// from the RMSE measured at each k scaled by (RMSE/0.02)² (variance ∝ 1/k),
// and the median over k. Bytes count sample values only (the ~30-byte
// sketch header is the same for all): ICWS and single-scale HMT k·b/8,
// multi-scale HMT 16 + t·(k/(t−τ))·b/8 = 16 + 1.5·k·b/8 at the defaults;
// ½-bit stores half as many 1-bit values.
func sizeRow(w io.Writer, ks []int, all [][]hmtRow) {
	const target = 0.02
	fmt.Fprintln(w, "# bytes of sample values per sketch for RMSE 0.02 (measured RMSE at each k scaled by (RMSE/0.02)^2; median over k)")
	fmt.Fprintln(w, "method\tvariant\tbits_per_sample\tbytes_at_J0.9\tbytes_at_J0.5")
	type method struct {
		name  string
		get   func(r hmtRow, vi int) stat
		bytes func(k int, v variant) float64
	}
	for _, m := range []method{
		{"icws", func(r hmtRow, vi int) stat { return r.icws[vi] }, func(k int, v variant) float64 { return float64(k) * v.bits() / 8 }},
		{"hmt-single", func(r hmtRow, vi int) stat { return r.single[vi] }, func(k int, v variant) float64 { return float64(k) * v.bits() / 8 }},
		{"hmt-multi", func(r hmtRow, vi int) stat { return r.multi[vi] }, func(k int, v variant) float64 { return 16 + 1.5*float64(k)*v.bits()/8 }},
	} {
		for vi, v := range variants {
			var at [2][]float64
			for ki, k := range ks {
				for li, r := range all[ki] {
					ti := -1
					switch levels[li] {
					case 0.90:
						ti = 0
					case 0.50:
						ti = 1
					}
					if ti < 0 {
						continue
					}
					s := m.get(r, vi)
					rmse := math.Sqrt(s.sum2 / float64(r.n))
					at[ti] = append(at[ti], m.bytes(k, v)*(rmse/target)*(rmse/target))
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%g\t%.0f\t%.0f\n", m.name, v.name, v.bits(), median(at[0]), median(at[1]))
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// plotHMT draws Figures 5.1 (MAE) and 5.2 (SD) for one k and variant as
// grouped bars over the true-J levels: Ioffe, single-scale HMT, the
// rounding alone, and multi-scale HMT.
func plotHMT(dir string, k, vi int, rows []hmtRow) error {
	v := variants[vi]
	tag := map[string]string{"full": "full", "2-bit": "2bit", "1-bit": "1bit", "½-bit": "halfbit"}[v.name]
	for _, fig := range []struct {
		file, title string
		val         func(s stat, n int) float64
	}{
		{fmt.Sprintf("hmt_fig5_1_%s_k%d.png", tag, k), fmt.Sprintf("HMT Figure 5.1: mean absolute error, %s, k = %d", v.name, k), stat.mae},
		{fmt.Sprintf("hmt_fig5_2_%s_k%d.png", tag, k), fmt.Sprintf("HMT Figure 5.2: standard deviation, %s, k = %d", v.name, k), stat.sd},
	} {
		p := plot.New()
		p.Title.Text = fig.title
		p.Y.Label.Text = "error"
		p.X.Label.Text = "true weighted Jaccard"
		names := make([]string, len(rows))
		for i, r := range rows {
			names[i] = fmt.Sprintf("%.2f", r.j)
		}
		series := []struct {
			name string
			get  func(r hmtRow) stat
		}{
			{"Ioffe (icws)", func(r hmtRow) stat { return r.icws[vi] }},
			{"HMT single scale", func(r hmtRow) stat { return r.single[vi] }},
			{"rounding alone", func(r hmtRow) stat { return r.round }},
			{"HMT t=3 (defaults)", func(r hmtRow) stat { return r.multi[vi] }},
		}
		bw := vg.Points(5)
		var top float64
		for si, s := range series {
			vals := make(plotter.Values, len(rows))
			for i, r := range rows {
				vals[i] = fig.val(s.get(r), r.n)
				top = math.Max(top, vals[i])
			}
			bars, err := plotter.NewBarChart(vals, bw)
			if err != nil {
				return err
			}
			bars.LineStyle.Width = 0
			bars.Color = hmtColor(si)
			bars.Offset = vg.Length(float64(si)-1.5) * bw
			p.Add(bars)
			p.Legend.Add(s.name, bars)
		}
		p.Legend.Top, p.Legend.Left = true, true
		p.Y.Min, p.Y.Max = 0, 1.35*top // room for the legend above the short bars on the left
		p.NominalX(names...)
		if err := p.Save(8*vg.Inch, 4*vg.Inch, filepath.Join(dir, fig.file)); err != nil {
			return err
		}
	}
	return nil
}

func hmtColor(i int) color.Color {
	return []color.Color{
		color.RGBA{R: 31, G: 119, B: 180, A: 255},
		color.RGBA{R: 214, G: 39, B: 40, A: 255},
		color.RGBA{R: 127, G: 127, B: 127, A: 255},
		color.RGBA{R: 44, G: 160, B: 44, A: 255},
	}[i]
}
