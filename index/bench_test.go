package index

import (
	"flag"
	"fmt"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

var benchDocs = flag.Int("index.docs", 20000, "documents per BenchmarkBuild build")

// BenchmarkBuild builds an index of -index.docs documents (OPH, k = 128,
// the default LSH scheme for threshold 0.8: 17 keys and a fingerprint per
// document, records of about 1 KB) on a fresh Pebble store, as dedup's
// store stage does, and leaves it compacted; one op is one build.
// "batches" adds 2,048 documents per Add (each a write-ahead-log batch,
// what dedup did before Bulk), "bulk" adds them through one Bulk in calls
// of 2,048. It reports documents per second of wall and CPU time, the
// bytes Pebble wrote per document (log, flushes, compactions, ingested
// tables) and the write amplification: those bytes per byte of the
// records and posting keys written.
func BenchmarkBuild(b *testing.B) {
	n := *benchDocs
	cfg, docs, logical := buildDocs(b, n)
	const chunk = 2048
	build := func(b *testing.B, bulk bool) {
		var written uint64
		var cpuNS int64
		for b.Loop() {
			cpu := processCPU()
			st, err := store.OpenPebble(b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			x := mustOpen(b, st, cfg)
			if bulk {
				bk, err := x.NewBulk()
				if err != nil {
					b.Fatal(err)
				}
				for lo := 0; lo < n; lo += chunk {
					if _, err := bk.Add(bg, docs[lo:min(lo+chunk, n)]...); err != nil {
						b.Fatal(err)
					}
				}
				if err := bk.Commit(bg); err != nil {
					b.Fatal(err)
				}
				bk.Close()
			} else {
				for lo := 0; lo < n; lo += chunk {
					mustAdd(b, x, docs[lo:min(lo+chunk, n)]...)
				}
			}
			if err := x.Flush(bg); err != nil {
				b.Fatal(err)
			}
			if err := store.Compact(bg, st); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			cpuNS += processCPU() - cpu
			stats, err := st.Stats(bg)
			if err != nil || stats.Docs != int64(n) {
				b.Fatalf("%d docs, %v", stats.Docs, err)
			}
			written += stats.BytesWritten
			st.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(written)/float64(b.N)/float64(logical), "write-amp")
		b.ReportMetric(float64(written)/float64(b.N*n), "written-B/doc")
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
		if cpuNS > 0 {
			b.ReportMetric(float64(b.N*n)/(float64(cpuNS)/1e9), "docs/cpu-s")
		}
	}
	b.Run("batches", func(b *testing.B) { build(b, false) })
	b.Run("bulk", func(b *testing.B) { build(b, true) })
}

// buildDocs makes n documents of 300 random features, sketched with OPH
// (k = 128) under the default LSH scheme for threshold 0.8, and the bytes
// of the records and posting keys they make.
func buildDocs(tb testing.TB, n int) (Config, []*Doc, int64) {
	cfg := Config{Sketch: sample.Config{Algorithm: sketch.OPH, K: 128, Seed: 1}, Threshold: 0.8}
	var docs []*Doc
	var logical int64
	{
		x := mustOpen(tb, store.NewMemory(), cfg)
		smp, err := sample.New(x.Config().Sketch)
		if err != nil {
			tb.Fatal(err)
		}
		st := rng.New(7)
		fs := make([]feature.Feature, 300)
		for i := range n {
			fp := uint64(i)
			for j := range fs {
				fs[j] = feature.Feature{ID: st.Uint64(), Weight: 1}
				fp = rng.Hash(fp, fs[j].ID)
			}
			d := &Doc{Name: fmt.Sprintf("doc-%07d", i), Fingerprint: identity.Fingerprint{Hi: fp, Lo: ^fp, Len: 300}, HasFingerprint: true,
				Sketch: sketch.Sketch{Header: smp.Header(), Values: smp.Sketch(nil, fs), Size: float64(len(fs))}}
			keys, err := x.postingsOf(nil, d)
			if err != nil {
				tb.Fatal(err)
			}
			rec, err := AppendDoc(nil, d)
			if err != nil {
				tb.Fatal(err)
			}
			logical += int64(len(keys))*17 + 9 + int64(len(rec))
			docs = append(docs, d)
		}
	}
	return cfg, docs, logical
}

// BenchmarkJoin joins -index.docs documents (as BenchmarkBuild makes
// them) on one goroutine: one op is one whole Join (every LSH key's pass:
// key computation, sort, runs).
func BenchmarkJoin(b *testing.B) {
	cfg, docs, _ := buildDocs(b, *benchDocs)
	x := mustOpen(b, store.NewMemory(), cfg)
	values := func(dst []uint64, i int) []uint64 { return append(dst, docs[i].Sketch.Values...) }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.Join(bg, len(docs), values, BatchOptions{Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(docs))/b.Elapsed().Seconds(), "docs/s")
}
