package report

import (
	"os"
	"testing"

	"github.com/neardup/neardup/lsh"
)

func TestDevPlots(t *testing.T) {
	if os.Getenv("DEV_PLOTS") == "" {
		t.Skip()
	}
	w := func(name string, fn func(f *os.File) error) {
		f, _ := os.Create("/tmp/rep/" + name)
		if err := fn(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	w("scurve.png", func(f *os.File) error {
		return SCurve(f, PNG, Chart{Title: "Detection probability P(J)"}, []lsh.Params{lsh.AltaVista(), lsh.Bing()}, 0.8)
	})
	w("scurve-log.png", func(f *os.File) error {
		return SCurve(f, PNG, Chart{LogY: true, Width: 6 * 72, Height: 4 * 72}, []lsh.Params{lsh.AltaVista(), lsh.Bing()}, 0.8)
	})
	vals := []float64{0.1, 0.3, 0.35, 0.4, 0.5, 0.82, 0.85, 0.9, 0.95, 1}
	w("hist.png", func(f *os.File) error {
		return StackedHistogram(f, PNG, Chart{Width: 8 * 72, Height: 3.4 * 72, Marks: []Mark{{0.8, "threshold 0.8"}}}, 0, 1, 100,
			Series{"exact Jaccard (873)", vals}, Series{"rejected candidates (826)", vals[:4]}, Series{"identical bodies (3)", []float64{1, 1, 1}})
	})
	w("sizes.png", func(f *os.File) error {
		return SizeDistribution(f, PNG, Chart{}, []int{2, 2, 2, 3, 4, 17, 130, 1000, 20000})
	})
}
