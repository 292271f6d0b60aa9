package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

// applyRandom writes the same random operations to each batch: postings
// under few keys (so that adds and removes collide), documents and
// metadata values, puts and deletes. With sorted, the records (PutDoc,
// DeleteDoc) come in strictly increasing id order, as a sorted bulk takes
// them, some ids skipped.
func applyRandom(seed uint64, n int, sorted bool, bs ...store.Batch) {
	st := rng.New(seed)
	next := uint64(0)
	for range n {
		key, id := st.Intn(50), st.Intn(400)
		op := st.Intn(10)
		if sorted && op >= 7 && op < 9 {
			id, next = next, next+1+id%3
		}
		for _, b := range bs {
			switch {
			case op < 5:
				b.AddPosting(key, id)
			case op < 7:
				b.RemovePosting(key, id)
			case op < 8:
				b.PutDoc(id, []byte(fmt.Sprint("rec-", seed, "-", id, "-", key)))
			case op < 9:
				b.DeleteDoc(id)
			default:
				if key%2 == 0 {
					b.PutMeta(fmt.Sprint("m", key), []byte(fmt.Sprint(seed, id)))
				} else {
					b.DeleteMeta(fmt.Sprint("m", key))
				}
			}
		}
	}
}

// sameContents fails the test if a and b hold different postings,
// documents or metadata values (m0..m49).
func sameContents(t *testing.T, a, b store.Store) {
	t.Helper()
	ctx := context.Background()
	pa, pb := scanAll(t, a), scanAll(t, b)
	if !slices.Equal(pa, pb) {
		t.Fatalf("postings differ: %d and %d", len(pa), len(pb))
	}
	da, db := docsAll(t, a), docsAll(t, b)
	if !slices.Equal(da, db) {
		t.Fatalf("documents differ: %d and %d", len(da), len(db))
	}
	for k := range 50 {
		name := fmt.Sprint("m", k)
		va, oka, _ := a.Meta(ctx, name, nil)
		vb, okb, _ := b.Meta(ctx, name, nil)
		if oka != okb || string(va) != string(vb) {
			t.Fatalf("meta %s: %q %v and %q %v", name, va, oka, vb, okb)
		}
	}
}

func scanAll(t *testing.T, s store.Store) []string {
	var out []string
	if err := s.ScanPostings(context.Background(), func(key, id uint64) error {
		out = append(out, fmt.Sprint(key, "/", id))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func docsAll(t *testing.T, s store.Store) []string {
	var out []string
	if err := s.ScanDocs(context.Background(), func(id uint64, rec []byte) error {
		out = append(out, fmt.Sprint(id, "=", string(rec)))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// commitBoth commits b into s and rb into ref, closes them, and checks
// that s and ref hold the same.
func commitBoth(t *testing.T, b, rb store.Batch, s, ref store.Store) {
	t.Helper()
	if err := b.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rb.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Close()
	rb.Close()
	sameContents(t, s, ref)
}

// noBulkDirs fails the test if a bulk left its directory in dir.
func noBulkDirs(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "neardup-bulk-") {
			t.Errorf("bulk directory %s left behind", e.Name())
		}
	}
}

// bulkPair opens a Pebble store whose bulks spill runs of 4 KiB, and an
// in-memory store to compare it with; both close with the test.
func bulkPair(t *testing.T) (string, *store.Pebble, *store.Memory) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	s, err := store.OpenPebble(dir, &store.PebbleOptions{CacheBytes: 8 << 20, BulkBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ref := store.NewMemory()
	t.Cleanup(func() { ref.Close() })
	return dir, s, ref
}

// TestPebbleBulkEquivalence checks that a bulk equals one batch of the
// same writes, over a store that already holds data, with a memory budget
// small enough that the bulk spills dozens of sorted runs and merges them
// (later runs win), and that the runs are removed afterwards.
// It does so with the postings cut into 1, 2 and 5 parts, each merged
// and written by its own goroutine.
func TestPebbleBulkEquivalence(t *testing.T) {
	ctx := context.Background()
	for _, parts := range []int{1, 2, 5} {
		t.Run(fmt.Sprint("parts=", parts), func(t *testing.T) {
			defer store.SetBulkParts(parts)()
			dir, s, ref := bulkPair(t)
			for round := range uint64(4) {
				var b, rb store.Batch
				if round%2 == 0 { // alternate: a batch, then a bulk
					b, rb = s.NewBatch(), ref.NewBatch()
				} else {
					b, rb = s.NewBulk(), ref.NewBatch()
				}
				applyRandom(round+1, 6000, false, b, rb)
				commitBoth(t, b, rb, s, ref)
			}
			if err := s.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			sameContents(t, s, ref)
			noBulkDirs(t, dir)
		})
	}
}

// TestPebbleSortedBulk checks that a sorted bulk (records straight into
// tables, several of them) equals one batch of the same writes over a
// store that already holds records it overwrites and deletes, and that a
// record out of order fails its Commit, which then applies nothing.
func TestPebbleSortedBulk(t *testing.T) {
	defer store.SetBulkTableBytes(16 << 10)()
	ctx := context.Background()
	dir, s, ref := bulkPair(t)
	for round := range uint64(4) {
		rb := ref.NewBatch()
		var b store.Batch
		if round%2 == 0 { // alternate: a batch, then a sorted bulk
			b = s.NewBatch()
			applyRandom(round+1, 3000, false, b, rb)
		} else {
			b = store.NewSortedBulk(s)
			applyRandom(round+1, 12000, true, b, rb)
		}
		commitBoth(t, b, rb, s, ref)
	}
	noBulkDirs(t, dir)

	// Out of order: the Commit fails and nothing is applied.
	before := docsAll(t, s)
	b := store.NewSortedBulk(s)
	b.AddPosting(7, 7)
	b.PutDoc(1000, []byte("a"))
	b.PutDoc(999, []byte("b"))
	if err := b.Commit(ctx); err == nil || !strings.Contains(err.Error(), "increasing id order") {
		t.Fatalf("a record out of order: Commit returned %v", err)
	}
	b.Close()
	if got := docsAll(t, s); !slices.Equal(got, before) {
		t.Errorf("a failed sorted bulk changed the records: %d, was %d", len(got), len(before))
	}
	sameContents(t, s, ref)
}

// TestPebbleBulkFaults fails the writing of a bulk's runs and tables and
// its ingestion: Commit returns the error promptly, applies nothing, and
// what was committed before survives; a bulk left by a killed process is
// removed when the store is opened again.
func TestPebbleBulkFaults(t *testing.T) {
	defer store.SetBulkMinSegment(1 << 10)()
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		match  func(errorfs.Op) bool
		ok     bool // Pebble gets around the fault
		sorted bool // a sorted bulk, whose records go to tables of their own
	}{
		{"run", writesTo("run-"), false, false},
		{"table", writesTo("table-"), false, false},
		{"table-sync", func(op errorfs.Op) bool {
			return isSync(op.Kind) && strings.HasPrefix(filepath.Base(op.Path), "table-")
		}, false, false},
		// The records' tables are written by a goroutine of their own.
		{"records", writesTo("records-"), false, true},
		// Ingestion copies a table it cannot hard-link.
		{"ingest-link", func(op errorfs.Op) bool { return op.Kind == errorfs.OpLink }, true, false},
		{"ingest-manifest", writesTo("MANIFEST"), false, false},
		// The merge reads the runs and removes each file it has read.
		{"run-read", func(op errorfs.Op) bool {
			return op.Kind == errorfs.OpFileRead && strings.HasPrefix(filepath.Base(op.Path), "run-")
		}, false, false},
		{"run-remove", func(op errorfs.Op) bool {
			return op.Kind == errorfs.OpRemove && strings.HasPrefix(filepath.Base(op.Path), "run-")
		}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := pebbleBefore(t)
			dir := filepath.Join(t.TempDir(), "index")
			in := &inject{match: c.match, err: syscall.ENOSPC}
			s, err := store.OpenPebble(dir, &store.PebbleOptions{FS: errorfs.Wrap(vfs.Default, in), CacheBytes: 8 << 20, BulkBytes: 16 << 10})
			if err != nil {
				t.Fatal(err)
			}
			b := s.NewBatch()
			next := 0
			commitBatches(t, b, &next, 5)
			b.Close()
			in.on.Store(true)
			bulk := s.NewBulk()
			if c.sorted {
				bulk = store.NewSortedBulk(s)
			}
			for i := range uint64(5000) {
				bulk.AddPosting(1<<40+i%97, i)
				bulk.PutDoc(1<<40+i, []byte("record")) // runs of values too, in segments
			}
			err, took := within(t, "bulk Commit", func() error { return bulk.Commit(ctx) })
			bulk.Close()
			if c.ok {
				if err != nil {
					t.Fatalf("bulk Commit: %v", err)
				}
				if ids, err := s.Postings(ctx, 1<<40, nil); err != nil || len(ids) != 52 {
					t.Errorf("bulk committed around the fault: %d postings, %v; want 52", len(ids), err)
				}
				s.Close()
				checkNoPebble(t, before)
				return
			}
			if !errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), dir) {
				t.Fatalf("bulk Commit: %v, want a one-line ENOSPC naming %s", err, dir)
			}
			t.Logf("failed after %v: %v", took, err)
			if ids, err := s.Postings(ctx, 1<<40, nil); err == nil && len(ids) != 0 {
				t.Errorf("a failed bulk was applied: %d postings", len(ids))
			}
			within(t, "Close", s.Close)
			checkNoPebble(t, before)
			in.on.Store(false)
			copyDir := copyStore(t, dir)
			checkAcked(t, copyDir, next-1)
			s2, err := store.OpenPebble(copyDir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if ids, _ := s2.Postings(ctx, 1<<40, nil); len(ids) != 0 {
				t.Errorf("a failed bulk is there after reopening: %d postings", len(ids))
			}
		})
	}

	// A bulk directory of a killed process goes at the next open.
	dir := filepath.Join(t.TempDir(), "index")
	s := openPebble(t, dir)
	s.Close()
	left := filepath.Join(dir, "neardup-bulk-1-1")
	os.MkdirAll(left, 0o755)
	os.WriteFile(filepath.Join(left, "run-000000"), []byte("partial"), 0o644)
	s = openPebble(t, dir)
	s.Close()
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("leftover bulk directory: %v", err)
	}
}

// diskFS measures a bulk's directory each time a table is created in it
// and each time Ingest links one out of it: the bytes of its run files
// and of its tables, and the most the directory held.
type diskFS struct {
	vfs.FS
	mu                 sync.Mutex
	peak, runs, tables int64
	runsAtLink         int64 // run bytes left when Ingest began
	linked             bool
}

func (d *diskFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	if strings.HasPrefix(filepath.Base(name), "table-") {
		d.measure(filepath.Dir(name), false)
	}
	return d.FS.Create(name, cat)
}

func (d *diskFS) Link(oldname, newname string) error {
	if strings.HasPrefix(filepath.Base(filepath.Dir(oldname)), "neardup-bulk-") {
		d.measure(filepath.Dir(oldname), true)
	}
	return d.FS.Link(oldname, newname)
}

func (d *diskFS) measure(dir string, link bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, _ := os.ReadDir(dir)
	var runs, tables int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if strings.HasPrefix(e.Name(), "run-") {
			runs += info.Size()
		} else {
			tables += info.Size()
		}
	}
	d.peak = max(d.peak, runs+tables)
	d.runs, d.tables = max(d.runs, runs), max(d.tables, tables)
	if link && !d.linked {
		d.linked, d.runsAtLink = true, runs
	}
}

// TestPebbleBulkDiskPeak checks that a bulk's Commit frees its runs as
// it merges them into tables: a build whose runs (records of random
// bytes, as incompressible as sketches, and postings) spill to some
// twenty runs, each run's values cut into many segments, keeps its
// directory within 1.25 times the larger of the runs and the tables,
// where holding both until the end took about twice that; no run is left
// when Ingest begins; and the store holds what a batch of the same writes
// gives. The directory is measured at each table's creation (the runs
// read so far should be gone by then), and the tables of other writers
// still being written are not counted: they add at most a table a writer.
func TestPebbleBulkDiskPeak(t *testing.T) {
	defer store.SetBulkTableBytes(64 << 10)()
	defer store.SetBulkMinSegment(16 << 10)()
	dfs := &diskFS{FS: vfs.Default}
	s, err := store.OpenPebble(filepath.Join(t.TempDir(), "index"), &store.PebbleOptions{FS: dfs, CacheBytes: 8 << 20, BulkBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref := store.NewMemory()
	defer ref.Close()
	b, rb := s.NewBulk(), ref.NewBatch()
	st := rng.New(29)
	rec := make([]byte, 1000)
	const docs = 16000
	for i := range uint64(docs) {
		id := rng.Hash(29, i) % (4 * docs) // random order, as a dedup's stage file
		for j := range rec {
			rec[j] = byte(st.Uint64())
		}
		for _, x := range []store.Batch{b, rb} {
			x.PutDoc(id, rec)
			for k := range uint64(8) {
				x.AddPosting(rng.Hash(k, id)%5000, id)
			}
			if i%1000 == 0 {
				x.PutMeta(fmt.Sprint("m", i/1000), rec[:8])
			}
		}
	}
	commitBoth(t, b, rb, s, ref)
	if !dfs.linked {
		t.Fatal("no table was ingested")
	}
	big := max(dfs.runs, dfs.tables)
	t.Logf("runs %d B, tables %d B, peak %d B (%.2f of the larger)", dfs.runs, dfs.tables, dfs.peak, float64(dfs.peak)/float64(big))
	if dfs.runs < 10<<20 || dfs.tables < 10<<20 {
		t.Fatalf("runs %d B and tables %d B: the build is too small to measure", dfs.runs, dfs.tables)
	}
	if dfs.runsAtLink != 0 {
		t.Errorf("%d B of runs left when Ingest began", dfs.runsAtLink)
	}
	if float64(dfs.peak) > 1.25*float64(big) {
		t.Errorf("the bulk's directory peaked at %d B, over 1.25 times the larger of runs (%d B) and tables (%d B)", dfs.peak, dfs.runs, dfs.tables)
	}
}
