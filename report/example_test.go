package report_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/report"
)

func ExampleHistogram() {
	var b bytes.Buffer
	err := report.Histogram(&b, report.SVG, "similarity", []float64{0.81, 0.85, 0.9, 0.93, 0.97, 1}, 10)
	fmt.Println(err, strings.HasPrefix(b.String(), "<?xml"), strings.Contains(b.String(), "similarity"))
	// Output: <nil> true true
}

func ExampleStackedHistogram() {
	var b bytes.Buffer
	err := report.StackedHistogram(&b, report.PNG, report.Chart{Title: "verified pairs", XLabel: "J"}, 0.8, 1, 20,
		report.Series{Name: "exact", Values: []float64{0.82, 0.9, 0.95}},
		report.Series{Name: "estimated", Values: []float64{0.85, 0.91}})
	fmt.Println(err, bytes.HasPrefix(b.Bytes(), []byte("\x89PNG")))
	// Output: <nil> true
}

func ExampleSizeDistribution() {
	var b bytes.Buffer
	err := report.SizeDistribution(&b, report.SVG, report.Chart{XLabel: "cluster size"}, []int{2, 2, 2, 3, 5, 40})
	fmt.Println(err, strings.Contains(b.String(), "cluster size"))
	// Output: <nil> true
}

func ExampleSCurve() {
	f, err := os.CreateTemp("", "scurve-*.svg")
	if err != nil {
		panic(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	err = report.SCurve(f, report.SVG, report.Chart{Title: "AltaVista vs Bing"}, []lsh.Params{lsh.AltaVista(), lsh.Bing()}, 0.8)
	fmt.Println(err)
	// Output: <nil>
}

func ExampleCurves() {
	var b bytes.Buffer
	// A single min-hash sample collides with probability J.
	err := report.Curves(&b, report.SVG, report.Chart{}, []report.Curve{{Name: "one sample", P: func(j float64) float64 { return j }}}, 0.5)
	fmt.Println(err, strings.Contains(b.String(), "one sample (P = 0.500 at 0.5)"))
	// Output: <nil> true
}

func ExamplePickExamples() {
	sizes := []int{2, 7, 3, 2, 12, 2, 2, 4}
	big, random := report.PickExamples(sizes, 2, 3, 42)
	fmt.Println(big, len(random))
	// Output: [4 1] 3
}

func ExampleDedup() {
	data := &report.DedupData{
		Inputs:       []string{"docs.jsonl"},
		Summary:      report.DedupSummary{Read: 3, Kept: 2, Duplicates: 1, Near: 1, Pairs: 1, Clusters: 1, Largest: 2},
		Threshold:    0.8,
		Pairs:        []report.PairSim{{Similarity: 0.86, Exact: true}},
		ClusterSizes: []int{2},
		Examples: []report.Example{{
			Cluster: 1, Why: "largest",
			Kept:    report.ExampleDoc{Name: "a", HasText: true, Text: "the quick brown fox jumps over the lazy dog"},
			Members: []report.ExampleDoc{{Name: "b", Similarity: 0.86, Exact: true, HasText: true, Text: "the quick red fox jumps over the lazy dog"}},
		}},
	}
	var b bytes.Buffer
	if err := report.Dedup(&b, data); err != nil {
		panic(err)
	}
	page := b.String()
	fmt.Println(strings.Contains(page, `<span class="del">brown</span>`), strings.Contains(page, `<span class="ins">red</span>`))
	// Output: true true
}

// A logarithmic axis shows the false-positive tail of a scheme (the book's
// figure 3.2), labelled at powers of ten.
func ExampleSCurve_log() {
	var b bytes.Buffer
	err := report.SCurve(&b, report.SVG, report.Chart{LogY: true, MinY: 1e-8}, []lsh.Params{lsh.AltaVista()}, 0.8)
	fmt.Println(err, strings.Contains(b.String(), ">1e-8<"), strings.Contains(b.String(), ">0.001<"))
	// Output: <nil> true true
}

// Marks draw dashed vertical lines, named in the legend below the plot.
func ExampleMark() {
	var b bytes.Buffer
	c := report.Chart{XLabel: "similarity", Marks: []report.Mark{{X: 0.8, Label: "threshold 0.8"}}}
	err := report.StackedHistogram(&b, report.SVG, c, 0, 1, 100,
		report.Series{Name: "verified", Values: []float64{0.82, 0.9, 0.95}},
		report.Series{Name: "rejected", Values: []float64{0.35, 0.5, 0.61}})
	fmt.Println(err, strings.Contains(b.String(), "threshold 0.8"))
	// Output: <nil> true
}

func ExampleCurves_pdf() {
	var b bytes.Buffer
	err := report.Curves(&b, report.PDF, report.Chart{Title: "one sample"}, []report.Curve{{Name: "P = J", P: func(j float64) float64 { return j }}}, 0)
	fmt.Println(err, bytes.HasPrefix(b.Bytes(), []byte("%PDF")))
	// Output: <nil> true
}

// A reader that numbers its records stops after Last: the records past it
// are not shown by any example. An empty run wants nothing (Last is -1).
func ExampleRunExamples_Last() {
	clusters := []report.RunCluster{
		{ID: 1, Kept: "a", Members: []report.RunMember{{Name: "a", Seq: 2, Similarity: 1}, {Name: "b", Seq: 5, Similarity: 0.9}}},
	}
	ex := report.Examples(clusters, report.ExampleOptions{Largest: 1})
	read := 0
	for seq := 0; seq < 1000; seq++ { // a corpus of 1000 records
		if seq > ex.Last() {
			break
		}
		read++
		if ex.Want(seq) {
			ex.SetText(seq, fmt.Sprint("record ", seq))
		}
	}
	fmt.Println(ex.Seqs(), ex.Last(), read, ex.Examples[0].Kept.Text)
	fmt.Println(report.Examples(nil, report.ExampleOptions{}).Last())
	// Output:
	// [2 5] 5 6 record 2
	// -1
}
