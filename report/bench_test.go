package report

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
)

// nearCopies returns a document of n random words and a copy with about
// n/100 words replaced, the report's typical diff.
func nearCopies(n int, changes int) (a, b []int32) {
	s := rng.New(rng.Key(3, 'b', 'e', 'n', 'c', 'h'))
	a = make([]int32, n)
	for i := range a {
		a[i] = int32(s.Intn(5000))
	}
	b = append([]int32(nil), a...)
	for i := 0; i < changes; i++ {
		b[s.Intn(uint64(n))] = int32(5000 + s.Intn(5000))
	}
	return a, b
}

// BenchmarkDiff diffs 2,000-word documents (the report's bound): near
// copies, and unrelated documents (the worst case, D = N + M).
func BenchmarkDiff(b *testing.B) {
	for _, c := range []struct {
		name    string
		changes int
	}{{"near-1pct", 20}, {"near-10pct", 200}} {
		a, bb := nearCopies(2000, c.changes)
		b.Run(c.name, func(b *testing.B) {
			var d differ
			b.ReportAllocs()
			for b.Loop() {
				d.diff(a, bb)
			}
		})
	}
	a, _ := nearCopies(2000, 0)
	other := make([]int32, 2000)
	for i := range other {
		other[i] = int32(100000 + i)
	}
	b.Run("unrelated", func(b *testing.B) {
		var d differ
		b.ReportAllocs()
		for b.Loop() {
			d.diff(a, other)
		}
	})
}

func BenchmarkPlots(b *testing.B) {
	s := rng.New(rng.Key(5))
	vals := make([]float64, 10000)
	for i := range vals {
		vals[i] = 0.8 + 0.2*s.Float64()
	}
	for _, format := range []string{SVG, PNG} {
		b.Run("histogram-"+format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Histogram(io.Discard, format, "", vals, 50); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("scurve-svg", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := SCurve(io.Discard, SVG, Chart{}, []lsh.Params{lsh.AltaVista()}, 0.8); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDedupPage renders a report with eight example clusters of five
// 2,000-word members each.
func BenchmarkDedupPage(b *testing.B) {
	s := rng.New(rng.Key(9))
	word := func() string { return "w" + strings.Repeat("x", int(s.Intn(6))) + string(rune('a'+s.Intn(26))) }
	text := func(base []string, changes int) string {
		ws := append([]string(nil), base...)
		for i := 0; i < changes; i++ {
			ws[s.Intn(uint64(len(ws)))] = word()
		}
		return strings.Join(ws, " ")
	}
	d := sampleData()
	d.Examples = nil
	for c := 0; c < 8; c++ {
		base := make([]string, 2000)
		for i := range base {
			base[i] = word()
		}
		ex := Example{Cluster: c + 1, Why: "largest", Kept: ExampleDoc{Name: "kept", HasText: true, Text: strings.Join(base, " ")}}
		for m := 0; m < 5; m++ {
			ex.Members = append(ex.Members, ExampleDoc{Name: "m", Similarity: 0.9, Exact: true, HasText: true, Text: text(base, 30)})
		}
		d.Examples = append(d.Examples, ex)
	}
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		if err := Dedup(&out, d); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.Len()))
}
