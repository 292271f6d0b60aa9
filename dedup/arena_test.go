package dedup

import (
	"runtime"
	"slices"
	"testing"
)

// The memory budget counts what the documents hold besides their sketch
// values (issue 15: runs went 18-41% over --memory because it did not).
// 2000 documents hold 2,048,000 bytes of sketch values (k = 128, 8 bytes
// each) and, per document, more than 200 bytes more for its Doc (counted
// 2.25 times, for the growth of Result.Docs) and its side columns besides
// its name and map entries.
// With a budget whose quarter is 2,448,000 bytes the sketches alone stay
// under it and the whole passes it: the run goes out of core, with the
// in-memory run's output.
func TestMemoryCountsDocuments(t *testing.T) {
	docs := plantedCorpus(2000)
	const quarter = 2048000 + 2000*200
	ext, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever, Memory: 4 * quarter, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var values int64 // the sketch file's bytes
	for _, s := range ext.Summary.Stages {
		if s.Name == StageSketch {
			values = s.Spilled
		}
	}
	if values != 2048000 {
		t.Fatalf("the documents hold %d bytes of sketch values, want 2048000", values)
	}
	if !ext.Summary.External {
		t.Fatalf("a run whose documents hold more than a quarter of the budget stayed in memory")
	}
	mem, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever})
	if err != nil {
		t.Fatal(err)
	}
	mp, mc := outputs(t, mem)
	ep, ec := outputs(t, ext)
	if mp != ep || mc != ec {
		t.Fatalf("out of core: pairs or clusters differ from the run in memory")
	}
}

// A job's bodies stay intact while the job is in use, whatever their
// sizes, and a recycled job starts empty.
func TestJobHold(t *testing.T) {
	j := newJob(7)
	var held [][]byte
	var want []string
	for i := range 200 {
		b := make([]byte, i*997%70000)
		for k := range b {
			b[k] = byte(i + k)
		}
		held = append(held, j.hold(b))
		want = append(want, string(b))
	}
	for i, h := range held {
		if string(h) != want[i] {
			t.Fatalf("body %d changed after later bodies were held", i)
		}
		if cap(h) != len(h) {
			t.Fatalf("body %d: capacity %d beyond its length %d (an append would write into the next body)", i, cap(h), len(h))
		}
	}
	j.recycle()
	if k := newJob(3); k.n != 3 || len(k.docs) != 0 || len(k.out) != 0 || len(k.buf) != 0 {
		t.Fatalf("a recycled job is not empty: n %d, %d docs, %d out, %d bytes", k.n, len(k.docs), len(k.out), len(k.buf))
	}
}

// Values carved from the arena keep their contents (folds or halves)
// through collections while their documents hold the chunk's owner, each
// slice's capacity is its length, and an out-of-core run's arena stays
// on the heap.
func TestValueArena(t *testing.T) {
	for _, onHeap := range []bool{false, true} {
		for _, narrow := range []bool{false, true} {
			a := valueArena{k: 4, heap: onHeap}
			type held struct {
				ws    []uint32
				chunk *arenaChunk
			}
			vals := func(i int) []uint64 {
				return []uint64{uint64(i), uint64(i) << 20, ^uint64(i), uint64(3*i) << 32}[:i%5]
			}
			var docs []held
			for i := range 3000 {
				got, c := a.copyOf(vals(i), narrow)
				if onHeap && c != nil {
					t.Fatalf("an arena on the heap gave an off-heap chunk")
				}
				if cap(got) != len(got) {
					t.Fatalf("values %d: capacity %d beyond length %d", i, cap(got), len(got))
				}
				docs = append(docs, held{got, c})
				if i%500 == 0 {
					runtime.GC()
				}
			}
			runtime.GC()
			for i, d := range docs {
				var want []uint32
				for _, v := range vals(i) {
					if narrow {
						want = append(want, uint32(v)^uint32(v>>32))
					} else {
						want = append(want, uint32(v), uint32(v>>32))
					}
				}
				if !slices.Equal(d.ws, want) {
					t.Fatalf("heap %v narrow %v: values %d changed: %v, want %v", onHeap, narrow, i, d.ws, want)
				}
			}
		}
	}
}

// BenchmarkValueArena carves the folded values of 16,384 sketches of
// k = 128 (8 MiB) from a fresh arena, as a worker of an in-memory run
// does: the cost of mapping the chunks' pages is most of it.
func BenchmarkValueArena(b *testing.B) {
	vs := make([]uint64, 128)
	for i := range vs {
		vs[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	const docs = 16384
	b.SetBytes(docs * 4 * 128)
	for b.Loop() {
		a := valueArena{k: 128}
		held := make([]*arenaChunk, 0, 64)
		for range docs {
			_, c := a.copyOf(vs, true)
			if len(held) == 0 || held[len(held)-1] != c {
				held = append(held, c)
			}
		}
		runtime.KeepAlive(held)
	}
}
