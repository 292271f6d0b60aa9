package store_test

import (
	"context"
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

var (
	benchPostings = flag.Int("store.postings", 1_000_000, "postings preloaded by the lookup benchmarks")
	benchCache    = flag.Int64("store.cache", 0, "Pebble block cache `MiB` in benchmarks (0: the default)")
	benchBlock    = flag.Int("store.block", 0, "Pebble data block `KiB` in benchmarks (0: the default)")
)

func benchPebble(b testing.TB) *store.Pebble {
	s, err := store.OpenPebble(b.TempDir(), &store.PebbleOptions{CacheBytes: *benchCache << 20, BlockBytes: *benchBlock << 10})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkWrite measures blind posting writes in batches of 10,000 with a
// synced Commit per batch (the durable path); one op is one posting.
func BenchmarkWrite(b *testing.B) {
	run := func(b *testing.B, s store.Store) {
		defer s.Close()
		batch := s.NewBatch()
		defer batch.Close()
		st := rng.New(1)
		b.ReportAllocs()
		b.SetBytes(16)
		i := 0
		cpu := processCPU()
		for b.Loop() {
			batch.AddPosting(st.Uint64(), uint64(i))
			if i++; i%10000 == 0 {
				if err := batch.Commit(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := batch.Commit(context.Background()); err != nil {
			b.Fatal(err)
		}
		reportCPU(b, cpu, "postings")
	}
	b.Run("memory", func(b *testing.B) { run(b, store.NewMemory()) })
	b.Run("pebble", func(b *testing.B) {
		run(b, benchPebble(b))
	})
}

// BenchmarkLookup measures Postings on a store holding -store.postings
// postings (default 1M: one id per key, as most near-duplicate keys are)
// after a bulk build and Compact (pebble), or straight after the build
// (pebble-uncompacted: memtable, L0 and upper levels all hold postings, as
// in a streaming index); half the lookups hit, half miss. A warm-up of up
// to 1M lookups first brings the blocks into the cache.
func BenchmarkLookup(b *testing.B) {
	n := *benchPostings
	load := func(b *testing.B, s store.Store, compact bool) {
		batch := s.NewBatch()
		defer batch.Close()
		for i := range n {
			batch.AddPosting(rng.Hash(3, uint64(i)), uint64(i))
			if batch.Len() == 50000 {
				if err := batch.Commit(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := batch.Commit(context.Background()); err != nil {
			b.Fatal(err)
		}
		if !compact {
			return
		}
		if err := store.Compact(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B, s store.Store, compact bool) {
		defer s.Close()
		load(b, s, compact)
		var ids []uint64
		// Warm up: enough hits to touch every block, so the loop measures
		// the steady state of a long-running index, not a cold cache.
		wst := rng.New(10)
		for range min(n, 1<<20) {
			var err error
			if ids, err = s.Postings(context.Background(), rng.Hash(3, wst.Uint64()%uint64(n)), ids[:0]); err != nil {
				b.Fatal(err)
			}
		}
		st := rng.New(9)
		b.ReportAllocs()
		b.ResetTimer()
		cpu := processCPU()
		for b.Loop() {
			x := st.Uint64()
			key := x // miss
			if x&1 == 0 {
				key = rng.Hash(3, x%uint64(n)) // hit
			}
			var err error
			if ids, err = s.Postings(context.Background(), key, ids[:0]); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu, "lookups")
	}
	b.Run("memory", func(b *testing.B) { run(b, store.NewMemory(), true) })
	for _, compact := range []bool{true, false} {
		name := "pebble"
		if !compact {
			name += "-uncompacted"
		}
		b.Run(name, func(b *testing.B) {
			run(b, benchPebble(b), compact)
		})
	}
}

// reportCPU reports the wall-clock rate (unit/s) and, where the platform
// measures it, the process CPU time per op (cpu-ns/op) and the rate that CPU
// time alone would allow on one idle core (unit/cpu-s). On a loaded, shared
// machine the CPU figures are the steadier ones; they include Pebble's
// background work (flushes, compactions) done during the loop.
func reportCPU(b *testing.B, cpu0 int64, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit+"/s")
	if cpu0 < 0 || b.N == 0 {
		return
	}
	ns := float64(processCPU()-cpu0) / float64(b.N)
	b.ReportMetric(ns, "cpu-ns/op")
	if ns > 0 {
		b.ReportMetric(1e9/ns, unit+"/cpu-s")
	}
}

// BenchmarkBuild builds a store of -store.postings postings (default 1M,
// random keys, one id each, as an index build writes them) and leaves it
// in its final, compacted shape; one op is one build. "batches" commits
// batches of 10,000 postings through the write-ahead log and then calls
// Compact (what a build did before bulks); "bulk" writes one bulk
// (NewBulk), whose tables are ingested straight into the last level. It
// reports postings per second of wall and CPU time, and the write
// amplification: bytes Pebble wrote (log, flushes, compactions, ingested
// tables) per byte of posting keys. "bulk-runs" gives the bulk a 4 MiB
// budget, so that it sorts its postings into runs on disk and merges them
// (the runs' bytes are not counted in the write amplification). A bulk's
// Commit (its sort, merge, table writes and ingestion) is also reported
// alone, in seconds of wall and of CPU.
// "sorted-records" writes a sorted bulk (NewSortedBulk) as dedup's store
// stage does: a record of 1 KiB of random bytes (a sketch's values do not
// compress) for every 16 postings, in id order, with its postings.
// "records-runs" writes a bulk (NewBulk) as an out-of-core dedup's does:
// a record of 1 KiB of random bytes for every 8 postings, in random id
// order, with a 16 MiB budget, so that the records take most of the runs
// and of the tables (as a dedup's sketches and feature ids do).
func BenchmarkBuild(b *testing.B) {
	n := *benchPostings
	ctx := context.Background()
	build := func(b *testing.B, bulk bool, bulkBytes int64, records bool) {
		every := 16
		if records && bulkBytes > 0 {
			every = 8
		}
		var written uint64
		var cpuNS, commitNS, commitCPUNS int64
		for b.Loop() {
			cpu := processCPU()
			s, err := store.OpenPebble(b.TempDir(), &store.PebbleOptions{CacheBytes: *benchCache << 20, BlockBytes: *benchBlock << 10, BulkBytes: bulkBytes})
			if err != nil {
				b.Fatal(err)
			}
			st := rng.New(1)
			if bulk {
				w := s.NewBulk()
				if records && bulkBytes == 0 {
					w = s.NewSortedBulk()
				}
				rec := make([]byte, 1024)
				for i := range n {
					id := uint64(i)
					if bulkBytes > 0 && records {
						id = rng.Hash(1, uint64(i/every)) // a document's postings together, documents in random order
					}
					if records && i%every == 0 {
						for j := range rec {
							rec[j] = byte(st.Uint64())
						}
						w.PutDoc(id, rec)
					}
					w.AddPosting(st.Uint64(), id)
				}
				cpu, start := processCPU(), time.Now()
				if err := w.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				commitNS += time.Since(start).Nanoseconds()
				commitCPUNS += processCPU() - cpu
				w.Close()
			} else {
				w := s.NewBatch()
				for i := range n {
					w.AddPosting(st.Uint64(), uint64(i))
					if w.Len() == 10000 {
						if err := w.Commit(ctx); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := w.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				w.Close()
				if err := s.Compact(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpuNS += processCPU() - cpu
			stats, err := s.Stats(ctx)
			if err != nil || stats.Postings != int64(n) {
				b.Fatalf("%d postings, %v", stats.Postings, err)
			}
			written += stats.BytesWritten
			s.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(written)/float64(b.N*n*postingKeyBytes), "write-amp")
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "postings/s")
		if cpuNS > 0 {
			b.ReportMetric(float64(b.N*n)/(float64(cpuNS)/1e9), "postings/cpu-s")
		}
		if bulk {
			b.ReportMetric(float64(commitNS)/1e9/float64(b.N), "commit-s/op")
			b.ReportMetric(float64(commitCPUNS)/1e9/float64(b.N), "commit-cpu-s/op")
		}
	}
	b.Run("batches", func(b *testing.B) { build(b, false, 0, false) })
	b.Run("bulk", func(b *testing.B) { build(b, true, 0, false) })
	b.Run("bulk-runs", func(b *testing.B) { build(b, true, 4<<20, false) })
	b.Run("sorted-records", func(b *testing.B) { build(b, true, 0, true) })
	b.Run("records-runs", func(b *testing.B) { build(b, true, 16<<20, true) })
}

// postingKeyBytes is the size of a posting's key in the store ('p', key,
// id); its value is empty.
const postingKeyBytes = 17

// BenchmarkLookupDocs reads 16 random records of 3.7 KB (a server's
// candidates for a request of 16 queries) from 50,000, with a block cache
// of 8 MiB so that most reads miss it, as at a million documents: Doc
// (a Get per record, copied out) against LookupDocs (a Get per record,
// read in place). LookupDocs once used one iterator for all the ids,
// which was faster here but not in a server that adds as it answers:
// every commit outdates the iterators (bench/serve measures that case).
func BenchmarkLookupDocs(b *testing.B) {
	st, err := store.OpenPebble(b.TempDir(), &store.PebbleOptions{CacheBytes: 8 << 20, BlockBytes: 4096})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const n = 50_000
	rec := make([]byte, 3700)
	for i := range rec {
		rec[i] = byte(i * 7919 >> 3)
	}
	bt := st.NewBatch()
	for i := range n {
		rec[0], rec[1], rec[2] = byte(i), byte(i>>8), byte(i>>16)
		bt.PutDoc(uint64(i)*0x9e3779b97f4a7c15, rec)
		if bt.Len() == 1000 {
			if err := bt.Commit(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := bt.Commit(context.Background()); err != nil {
		b.Fatal(err)
	}
	if err := st.Compact(context.Background()); err != nil {
		b.Fatal(err)
	}
	ids := make([]uint64, 16)
	x := uint64(1)
	next := func() {
		for j := range ids {
			x = x*6364136223846793005 + 1442695040888963407
			ids[j] = (x >> 33) % n * 0x9e3779b97f4a7c15
		}
		slices.Sort(ids)
	}
	b.Run("get", func(b *testing.B) {
		var dst []byte
		for b.Loop() {
			next()
			for _, id := range ids {
				var ok bool
				if dst, ok, err = st.Doc(context.Background(), id, dst[:0]); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		}
	})
	b.Run("lookupdocs", func(b *testing.B) {
		for b.Loop() {
			next()
			if err := st.LookupDocs(context.Background(), ids, func(_ int, _ []byte, ok bool) error {
				if !ok {
					b.Fatal("missing")
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
