package sample

import (
	"fmt"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// benchDoc is a 1,000-feature document: 64-bit fingerprints as a 5-shingle
// extractor would produce (uniform, distinct), generated on the fly.
func benchDoc(seed uint64) []feature.Feature {
	fs := make([]feature.Feature, 1000)
	st := rng.New(seed)
	for i := range fs {
		fs[i] = feature.Feature{ID: st.Uint64(), Weight: 1}
	}
	return fs
}

// BenchmarkSketch: ns per 1,000-feature document (ns/op) and per feature,
// docs/s (wall clock), cpu-docs/s (documents per second of process CPU
// time, the figure to trust on a loaded machine; run with -cpu 1 so that the
// process has one busy thread), and for the lazy samplers the random bits
// per input per sample.
//
//	go test ./sample -run '^$' -bench Sketch -benchtime 2000x -cpu 1
func BenchmarkSketch(b *testing.B) {
	docs := [8][]feature.Feature{}
	for i := range docs {
		docs[i] = benchDoc(uint64(i))
	}
	for _, sp := range specs {
		for _, k := range []int{64, 128, 256, 512} {
			b.Run(fmt.Sprintf("%v/k=%d", sp.alg, k), func(b *testing.B) {
				cfg := sp.cfg
				if sp.alg == sketch.LazyBitsBatched {
					cfg = Config{Block: 128}
				}
				smp, err := newSampler(sp.alg, k, 1, cfg)
				if err != nil {
					b.Fatal(err)
				}
				dst := make([]uint64, 0, 1024)
				b.ReportAllocs()
				b.SetBytes(8 * 1000)
				b.ResetTimer()
				c0 := cpuNanos()
				for i := 0; i < b.N; i++ {
					dst = smp.Sketch(dst[:0], docs[i&7])
				}
				b.StopTimer()
				if c := cpuNanos() - c0; c > 0 {
					b.ReportMetric(1e9*float64(b.N)/float64(c), "cpu-docs/s")
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(ns/1000, "ns/feature")
				b.ReportMetric(1e9/ns, "docs/s")
				if bc, ok := smp.(BitCounter); ok {
					b.ReportMetric(bc.Counter().PerInputPerSample(), "bits/input/sample")
				}
			})
		}
	}
}
