package sample

import (
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/sketch"
)

// ophCorpus is 256 distinct 1,000-feature documents (4 MiB of features):
// too many for the branch predictor to learn, and more than the L2 cache,
// as in a real corpus. BenchmarkSketch repeats 8 documents, whose branches
// the predictor learns, which flatters a data-dependent branch.
func ophCorpus() [][]feature.Feature { return ophDocs(256) }

// ophDocs is n distinct 1,000-feature documents; n is a power of two.
func ophDocs(n int) [][]feature.Feature {
	docs := make([][]feature.Feature, n)
	for i := range docs {
		docs[i] = benchDoc(uint64(1000 + i))
	}
	return docs
}

// BenchmarkOPHCorpus sketches a corpus of distinct 1,000-feature documents
// with OPH (k = 128) on one goroutine: cpu-docs/s is documents per second
// of process CPU time (run with -cpu 1).
//
//	go test ./sample -run '^$' -bench OPHCorpus -cpu 1
func BenchmarkOPHCorpus(b *testing.B) { benchOPHDocs(b, ophCorpus()) }

// benchOPHDocs sketches docs (a power of two of them) in turn with OPH,
// k = 128, on one goroutine, and reports cpu-docs/s and docs/s.
func benchOPHDocs(b *testing.B, docs [][]feature.Feature) {
	smp, err := New(Config{Algorithm: sketch.OPH, K: 128, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	mask := len(docs) - 1
	dst := make([]uint64, 0, 128)
	b.ReportAllocs()
	b.SetBytes(16 * 1000)
	b.ResetTimer()
	c0 := cpuNanos()
	for i := 0; i < b.N; i++ {
		dst = smp.Sketch(dst[:0], docs[i&mask])
	}
	b.StopTimer()
	if c := cpuNanos() - c0; c > 0 {
		b.ReportMetric(1e9*float64(b.N)/float64(c), "cpu-docs/s")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkOPHCorpusLarge is BenchmarkOPHCorpus on 4,096 distinct
// documents (64 MiB of features, as bench/sketch's 4,000): larger than the
// caches, so it also measures how well the features stream from memory.
//
//	go test ./sample -run '^$' -bench OPHCorpusLarge -cpu 1
func BenchmarkOPHCorpusLarge(b *testing.B) { benchOPHDocs(b, ophDocs(4096)) }

// BenchmarkOPHCorpusParallel is BenchmarkOPHCorpus on GOMAXPROCS
// goroutines sharing one sampler (samplers are safe for concurrent use),
// each with its own buffer: docs/s is the wall-clock throughput of all of
// them, cpu-docs/s per CPU-second of the process. Compare -cpu 1 and
// -cpu 2 for the scaling with cores (on a quiet machine; on a busy one
// the wall-clock figure measures the neighbours).
//
//	go test ./sample -run '^$' -bench OPHCorpusParallel -cpu 1,2
func BenchmarkOPHCorpusParallel(b *testing.B) {
	docs := ophCorpus()
	smp, err := New(Config{Algorithm: sketch.OPH, K: 128, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(16 * 1000)
	b.ResetTimer()
	c0 := cpuNanos()
	b.RunParallel(func(pb *testing.PB) {
		dst := make([]uint64, 0, 128)
		i := 0
		for pb.Next() {
			dst = smp.Sketch(dst[:0], docs[i&255])
			i += 7 // goroutines start together: spread their documents
		}
	})
	b.StopTimer()
	if c := cpuNanos() - c0; c > 0 {
		b.ReportMetric(1e9*float64(b.N)/float64(c), "cpu-docs/s")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}
