// Package storetest provides the conformance suite for store.Store
// implementations: every implementation (memory, Pebble, and later Redis)
// runs Run from its own tests, so they all behave exactly like the
// in-memory reference.
//
// It checks posting-set semantics (idempotent adds, removes), documents and
// metadata, the multi-key lookups and the scans, batch atomicity and reuse,
// that a store's Capabilities hold (an Ordered store yields every list and
// scan in increasing order; an unordered one is compared as sets), that a
// cancelled context stops the long operations, concurrent commits and reads
// under the race detector, errors after Close, and a randomized comparison
// with a model over many operations. It is not a benchmark and not a crash
// test (those depend on the backend).
//
// Failing wraps any store and fails chosen operations with a chosen error,
// in the manner of Pebble's error-injecting filesystem (vfs/errorfs), so
// that the code above a store can be tested against read and write errors
// at every step without a mock.
package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/store"
)

// Run runs the conformance suite. open must return a new, empty store each
// time it is called; Run closes it.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Empty", func(t *testing.T) { testEmpty(t, open(t)) })
	t.Run("Postings", func(t *testing.T) { testPostings(t, open(t)) })
	t.Run("Docs", func(t *testing.T) { testDocs(t, open(t)) })
	t.Run("Meta", func(t *testing.T) { testMeta(t, open(t)) })
	t.Run("Lookups", func(t *testing.T) { testLookups(t, open(t)) })
	t.Run("ScanPostings", func(t *testing.T) { testScanPostings(t, open(t)) })
	t.Run("Context", func(t *testing.T) { testContext(t, open(t)) })
	t.Run("Batch", func(t *testing.T) { testBatch(t, open(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, open(t)) })
	t.Run("Model", func(t *testing.T) { testModel(t, open(t), store.Store.NewBatch) })
	t.Run("BulkModel", func(t *testing.T) { testModel(t, open(t), store.NewBulk) })
	t.Run("Bulk", func(t *testing.T) { testBulk(t, open(t)) })
	t.Run("Closed", func(t *testing.T) { testClosed(t, open(t)) })
}

func commit(t *testing.T, b store.Batch) {
	t.Helper()
	if err := b.Commit(context.Background()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// postings returns the ids under key in increasing order: as the store
// yields them if it claims to be ordered (checking the claim), sorted
// otherwise.
func postings(t *testing.T, s store.Store, key uint64) []uint64 {
	t.Helper()
	ids, err := s.Postings(context.Background(), key, nil)
	if err != nil {
		t.Fatalf("Postings(%x): %v", key, err)
	}
	return inOrder(t, s, ids, fmt.Sprintf("Postings(%x)", key))
}

// inOrder checks that ids are in increasing order when s claims Ordered
// and sorts them (a copy) otherwise; an id must never appear twice.
func inOrder(t *testing.T, s store.Store, ids []uint64, what string) []uint64 {
	t.Helper()
	if !s.Capabilities().Ordered {
		ids = slices.Clone(ids)
		slices.Sort(ids)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("%s = %v: not strictly increasing (Capabilities().Ordered = %v)", what, ids, s.Capabilities().Ordered)
		}
	}
	return ids
}

// scanDocs returns the ids and records ScanDocs yields, in increasing id
// order (checked when s claims Ordered, sorted otherwise).
func scanDocs(t *testing.T, s store.Store) ([]uint64, map[uint64]string) {
	t.Helper()
	var ids []uint64
	recs := map[uint64]string{}
	err := s.ScanDocs(context.Background(), func(id uint64, rec []byte) error {
		ids = append(ids, id)
		recs[id] = string(rec)
		return nil
	})
	if err != nil {
		t.Fatalf("ScanDocs: %v", err)
	}
	return inOrder(t, s, ids, "ScanDocs ids"), recs
}

type posting struct{ key, id uint64 }

func cmpPosting(a, b posting) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// scanPostings returns every posting ScanPostings yields, in increasing
// (key, id) order (checked when s claims Ordered, sorted otherwise).
func scanPostings(t *testing.T, s store.Store) []posting {
	t.Helper()
	var ps []posting
	err := s.ScanPostings(context.Background(), func(key, id uint64) error {
		ps = append(ps, posting{key, id})
		return nil
	})
	if err != nil {
		t.Fatalf("ScanPostings: %v", err)
	}
	if !s.Capabilities().Ordered {
		slices.SortFunc(ps, cmpPosting)
	}
	for i := 1; i < len(ps); i++ {
		if cmpPosting(ps[i-1], ps[i]) >= 0 {
			t.Fatalf("ScanPostings: %v then %v: not strictly increasing (Capabilities().Ordered = %v)", ps[i-1], ps[i], s.Capabilities().Ordered)
		}
	}
	return ps
}

func testEmpty(t *testing.T, s store.Store) {
	defer s.Close()
	if ids := postings(t, s, 42); len(ids) != 0 {
		t.Errorf("empty store: postings %v", ids)
	}
	if _, ok, err := s.Doc(context.Background(), 1, nil); ok || err != nil {
		t.Errorf("empty store: Doc = %v, %v", ok, err)
	}
	if _, ok, err := s.Meta(context.Background(), "x", nil); ok || err != nil {
		t.Errorf("empty store: Meta = %v, %v", ok, err)
	}
	n := 0
	if err := s.ScanDocs(context.Background(), func(uint64, []byte) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("empty store: Docs saw %d, %v", n, err)
	}
}

func testPostings(t *testing.T, s store.Store) {
	defer s.Close()
	b := s.NewBatch()
	defer b.Close()
	for _, id := range []uint64{5, 3, 9, 3, 1<<63 + 7, 0} {
		b.AddPosting(7, id)
	}
	b.AddPosting(8, 1)
	if b.Len() != 7 {
		t.Errorf("Len = %d, want 7", b.Len())
	}
	commit(t, b)
	if b.Len() != 0 {
		t.Errorf("Len after Commit = %d", b.Len())
	}
	if got, want := postings(t, s, 7), []uint64{0, 3, 5, 9, 1<<63 + 7}; !slices.Equal(got, want) {
		t.Errorf("postings 7 = %v, want %v", got, want)
	}
	// dst is appended to, not overwritten
	if got, _ := s.Postings(context.Background(), 8, []uint64{99}); !slices.Equal(got, []uint64{99, 1}) {
		t.Errorf("append to dst: %v", got)
	}
	b.AddPosting(7, 3) // again: no duplicate
	b.RemovePosting(7, 5)
	b.RemovePosting(7, 1000) // absent: no-op
	b.RemovePosting(8, 1)
	commit(t, b)
	if got, want := postings(t, s, 7), []uint64{0, 3, 9, 1<<63 + 7}; !slices.Equal(got, want) {
		t.Errorf("postings 7 = %v, want %v", got, want)
	}
	if got := postings(t, s, 8); len(got) != 0 {
		t.Errorf("postings 8 after removing all = %v", got)
	}
	// later write in one batch wins
	b.AddPosting(9, 1)
	b.RemovePosting(9, 1)
	b.RemovePosting(10, 2)
	b.AddPosting(10, 2)
	commit(t, b)
	if got := postings(t, s, 9); len(got) != 0 {
		t.Errorf("add then remove in one batch: %v", got)
	}
	if got := postings(t, s, 10); !slices.Equal(got, []uint64{2}) {
		t.Errorf("remove then add in one batch: %v", got)
	}
	// re-adding after removal
	b.AddPosting(8, 1)
	commit(t, b)
	if got := postings(t, s, 8); !slices.Equal(got, []uint64{1}) {
		t.Errorf("re-add: %v", got)
	}
}

func testDocs(t *testing.T, s store.Store) {
	defer s.Close()
	b := s.NewBatch()
	defer b.Close()
	rec := []byte("hello")
	b.PutDoc(300, rec)
	rec[0] = 'j' // the batch copied it
	b.PutDoc(2, []byte("two"))
	b.PutDoc(1<<40, []byte{})
	b.PutDoc(7, []byte("seven"))
	b.DeleteDoc(7)
	b.PutMeta("params", []byte("r=14"))
	commit(t, b)
	if v, ok, err := s.Doc(context.Background(), 300, []byte("x")); err != nil || !ok || string(v) != "xhello" {
		t.Errorf("Doc(300) = %q %v %v", v, ok, err)
	}
	if v, ok, _ := s.Doc(context.Background(), 1<<40, nil); !ok || len(v) != 0 {
		t.Errorf("empty record: %q %v", v, ok)
	}
	if _, ok, _ := s.Doc(context.Background(), 7, nil); ok {
		t.Error("deleted doc 7 exists")
	}
	if v, ok, _ := s.Meta(context.Background(), "params", nil); !ok || string(v) != "r=14" {
		t.Errorf("Meta = %q %v", v, ok)
	}
	ids, recs := scanDocs(t, s)
	if !slices.Equal(ids, []uint64{2, 300, 1 << 40}) || !maps.Equal(recs, map[uint64]string{2: "two", 300: "hello", 1 << 40: ""}) {
		t.Errorf("Docs = %v %v", ids, recs)
	}
	stop := errors.New("stop")
	n := 0
	if err := s.ScanDocs(context.Background(), func(uint64, []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Docs stopping: %v after %d", err, n)
	}
	// fn may commit while iterating
	err := s.ScanDocs(context.Background(), func(id uint64, rec []byte) error {
		b := s.NewBatch()
		defer b.Close()
		b.PutMeta(fmt.Sprint("seen-", id), rec)
		return b.Commit(context.Background())
	})
	if v, ok, _ := s.Meta(context.Background(), "seen-2", nil); err != nil || !ok || string(v) != "two" {
		t.Errorf("commit during Docs: %v %q %v", err, v, ok)
	}
	b.PutDoc(2, []byte("TWO"))
	commit(t, b)
	if v, _, _ := s.Doc(context.Background(), 2, nil); string(v) != "TWO" {
		t.Errorf("overwrite: %q", v)
	}
}

func testMeta(t *testing.T, s store.Store) {
	defer s.Close()
	ctx := context.Background()
	b := s.NewBatch()
	defer b.Close()
	b.PutMeta("a", []byte("1"))
	b.PutMeta("b", []byte{})
	b.PutMeta("c", []byte("3"))
	b.DeleteMeta("c")
	b.DeleteMeta("never-written") // a no-op
	commit(t, b)
	if v, ok, err := s.Meta(ctx, "a", []byte("x")); err != nil || !ok || string(v) != "x1" {
		t.Errorf("Meta(a) = %q %v %v, want x1 appended to dst", v, ok, err)
	}
	if v, ok, err := s.Meta(ctx, "b", nil); err != nil || !ok || len(v) != 0 {
		t.Errorf("Meta(b) = %q %v %v, want an empty value that exists", v, ok, err)
	}
	if _, ok, err := s.Meta(ctx, "c", nil); err != nil || ok {
		t.Errorf("Meta(c) after put and delete in one batch: %v %v", ok, err)
	}
	b.DeleteMeta("a")
	b.PutMeta("b", []byte("2"))
	commit(t, b)
	if _, ok, err := s.Meta(ctx, "a", nil); err != nil || ok {
		t.Errorf("Meta(a) after DeleteMeta: %v %v", ok, err)
	}
	if v, _, _ := s.Meta(ctx, "b", nil); string(v) != "2" {
		t.Errorf("Meta(b) after overwrite = %q", v)
	}
	b.DeleteMeta("b")
	b.PutMeta("b", []byte("again"))
	commit(t, b)
	if v, ok, _ := s.Meta(ctx, "b", nil); !ok || string(v) != "again" {
		t.Errorf("Meta(b) after delete then put in one batch = %q %v", v, ok)
	}
	// Metadata is neither a document nor a posting.
	if ids, _ := scanDocs(t, s); len(ids) != 0 {
		t.Errorf("metadata seen by ScanDocs: %v", ids)
	}
	if ps := scanPostings(t, s); len(ps) != 0 {
		t.Errorf("metadata seen by ScanPostings: %v", ps)
	}
}

// testLookups checks LookupPostings and LookupDocs against Postings and Doc:
// every index once, in increasing order, repeated and absent keys
// included, and an error from fn stops the lookup.
func testLookups(t *testing.T, s store.Store) {
	defer s.Close()
	ctx := context.Background()
	b := s.NewBatch()
	defer b.Close()
	for key := range uint64(50) {
		for id := range key % 7 { // key%7 == 0: no postings
			b.AddPosting(key, id*1000+key)
		}
		if key%3 == 0 {
			b.PutDoc(key, []byte(fmt.Sprint("rec", key)))
		}
	}
	commit(t, b)
	keys := []uint64{3, 0, 49, 3, 7, 1 << 60, 48, 2, 2}
	for range 200 { // more than any internal chunking
		keys = append(keys, uint64(len(keys)*7)%50)
	}
	var got []int
	err := s.LookupPostings(ctx, keys, func(i int, ids []uint64) error {
		got = append(got, i)
		want := postings(t, s, keys[i])
		if ids := inOrder(t, s, ids, fmt.Sprintf("LookupPostings key %d", keys[i])); !slices.Equal(ids, want) && !(len(ids) == 0 && len(want) == 0) {
			t.Errorf("LookupPostings key %d (index %d) = %v, Postings = %v", keys[i], i, ids, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("LookupPostings: %v", err)
	}
	if !slices.Equal(got, seq(len(keys))) {
		t.Errorf("LookupPostings visited %v, want every index once in order", got)
	}
	if err := s.LookupPostings(ctx, nil, func(int, []uint64) error { t.Error("fn called for no keys"); return nil }); err != nil {
		t.Errorf("LookupPostings(no keys): %v", err)
	}
	stop := errors.New("stop")
	n := 0
	if err := s.LookupPostings(ctx, keys, func(int, []uint64) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("LookupPostings stopping: %v after %d calls", err, n)
	}

	got = got[:0]
	err = s.LookupDocs(ctx, keys, func(i int, rec []byte, ok bool) error {
		got = append(got, i)
		want, wok, err := s.Doc(ctx, keys[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok != wok || string(rec) != string(want) {
			t.Errorf("LookupDocs id %d (index %d) = %q %v, Doc = %q %v", keys[i], i, rec, ok, want, wok)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("LookupDocs: %v", err)
	}
	if !slices.Equal(got, seq(len(keys))) {
		t.Errorf("LookupDocs visited %v, want every index once in order", got)
	}
	n = 0
	if err := s.LookupDocs(ctx, keys, func(int, []byte, bool) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("LookupDocs stopping: %v after %d calls", err, n)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func testScanPostings(t *testing.T, s store.Store) {
	defer s.Close()
	ctx := context.Background()
	b := s.NewBatch()
	defer b.Close()
	want := []posting{{0, 5}, {1, 0}, {1, 1 << 63}, {7, 2}, {7, 3}, {1<<64 - 1, 1<<64 - 1}}
	for _, i := range []int{3, 5, 0, 2, 1, 4} {
		b.AddPosting(want[i].key, want[i].id)
	}
	b.AddPosting(9, 9)
	b.PutDoc(1, []byte("a document is not a posting"))
	commit(t, b)
	b.RemovePosting(9, 9)
	commit(t, b)
	if got := scanPostings(t, s); !slices.Equal(got, want) {
		t.Errorf("ScanPostings = %v, want %v", got, want)
	}
	stop := errors.New("stop")
	n := 0
	if err := s.ScanPostings(ctx, func(uint64, uint64) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("ScanPostings stopping: %v after %d", err, n)
	}
	// fn may read and commit while scanning (a repair does both).
	err := s.ScanPostings(ctx, func(key, id uint64) error {
		if _, err := s.Postings(ctx, key, nil); err != nil {
			return err
		}
		b := s.NewBatch()
		defer b.Close()
		b.AddPosting(key+1<<40, id)
		return b.Commit(ctx)
	})
	if err != nil {
		t.Fatalf("commit during ScanPostings: %v", err)
	}
	if got := postings(t, s, 7+1<<40); !slices.Equal(got, []uint64{2, 3}) {
		t.Errorf("postings written during the scan: %v", got)
	}
}

// testContext checks that the operations that may run long (lookups of
// many keys, scans, commits) give up on a cancelled context with an error
// that wraps the context's, and leave the store usable.
func testContext(t *testing.T, s store.Store) {
	defer s.Close()
	b := s.NewBatch()
	defer b.Close()
	b.AddPosting(1, 1)
	b.PutDoc(1, []byte("x"))
	commit(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", what, err)
		}
	}
	check("LookupPostings", s.LookupPostings(ctx, []uint64{1}, func(int, []uint64) error { called = true; return nil }))
	check("LookupDocs", s.LookupDocs(ctx, []uint64{1}, func(int, []byte, bool) error { called = true; return nil }))
	check("ScanDocs", s.ScanDocs(ctx, func(uint64, []byte) error { called = true; return nil }))
	check("ScanPostings", s.ScanPostings(ctx, func(uint64, uint64) error { called = true; return nil }))
	if called {
		t.Error("fn called under a cancelled context")
	}
	b.AddPosting(2, 2)
	check("Commit", b.Commit(ctx))
	b.Close()
	if ids := postings(t, s, 2); len(ids) != 0 {
		t.Errorf("a commit refused for its context was applied: %v", ids)
	}
	if ids := postings(t, s, 1); !slices.Equal(ids, []uint64{1}) {
		t.Errorf("store unusable after cancelled calls: %v", ids)
	}
}

func testBatch(t *testing.T, s store.Store) {
	defer s.Close()
	b := s.NewBatch()
	b.AddPosting(1, 1)
	b.PutDoc(1, []byte("a"))
	if ids := postings(t, s, 1); len(ids) != 0 {
		t.Errorf("uncommitted posting visible: %v", ids)
	}
	if _, ok, _ := s.Doc(context.Background(), 1, nil); ok {
		t.Error("uncommitted doc visible")
	}
	b.Close() // discards
	b2 := s.NewBatch()
	defer b2.Close()
	b2.AddPosting(2, 2)
	commit(t, b2)
	if ids := postings(t, s, 1); len(ids) != 0 {
		t.Errorf("discarded posting visible: %v", ids)
	}
	if err := b.Commit(context.Background()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Commit after Close = %v, want ErrClosed", err)
	}
}

func testConcurrent(t *testing.T, s store.Store) {
	defer s.Close()
	const workers, batches, per = 4, 10, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			b := s.NewBatch()
			defer b.Close()
			for i := range batches {
				for j := range per {
					b.AddPosting(uint64(j), uint64(w*batches+i))
				}
				b.PutDoc(uint64(w*batches+i), []byte{byte(w)})
				if err := b.Commit(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() { // readers never see a list out of order
			defer wg.Done()
			var ids []uint64
			for i := range batches * 5 {
				var err error
				ids, err = s.Postings(context.Background(), uint64(i%per), ids[:0])
				if err != nil || (s.Capabilities().Ordered && !slices.IsSorted(ids)) {
					t.Errorf("concurrent read: %v %v", ids, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for j := range per {
		if got := postings(t, s, uint64(j)); len(got) != workers*batches {
			t.Fatalf("key %d: %d ids, want %d", j, len(got), workers*batches)
		}
	}
}

// testModel applies random operations in random batches (made by
// newBatch: a batch, or a bulk) and compares every lookup with a
// map-based model.
func testModel(t *testing.T, s store.Store, newBatch func(store.Store) store.Batch) {
	defer s.Close()
	st := rng.New(rng.Key(77, 1))
	model := map[uint64]map[uint64]bool{}
	docs := map[uint64]string{}
	b := newBatch(s)
	defer b.Close()
	for round := range 40 {
		for range 1 + st.Intn(60) {
			key, id := st.Intn(20), st.Intn(30)
			switch st.Intn(5) {
			case 0, 1, 2:
				b.AddPosting(key, id)
				if model[key] == nil {
					model[key] = map[uint64]bool{}
				}
				model[key][id] = true
			case 3:
				b.RemovePosting(key, id)
				delete(model[key], id)
			case 4:
				if st.Intn(2) == 0 {
					rec := fmt.Sprint("doc", id, "-", round)
					b.PutDoc(id, []byte(rec))
					docs[id] = rec
				} else {
					b.DeleteDoc(id)
					delete(docs, id)
				}
			}
		}
		commit(t, b)
		for key := range uint64(20) {
			want := slices.Sorted(maps.Keys(model[key]))
			if got := postings(t, s, key); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("round %d key %d: %v, want %v", round, key, got, want)
			}
		}
		if _, got := scanDocs(t, s); !maps.Equal(got, docs) {
			t.Fatalf("round %d docs %v, want %v", round, got, docs)
		}
		var want []posting
		for key, ids := range model {
			for id := range ids {
				want = append(want, posting{key, id})
			}
		}
		slices.SortFunc(want, cmpPosting)
		if got := scanPostings(t, s); !slices.Equal(got, want) {
			t.Fatalf("round %d ScanPostings %v, want %v", round, got, want)
		}
	}
	if err := store.Compact(context.Background(), s); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	for key := range uint64(20) {
		want := slices.Sorted(maps.Keys(model[key]))
		if got := postings(t, s, key); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("after compaction key %d: %v, want %v", key, got, want)
		}
	}
}

// testBulk checks that a bulk (store.NewBulk) has a batch's semantics:
// nothing is visible before Commit, later writes win, removals and
// overwrites of what the store held apply, Close discards, and the bulk
// is reusable after Commit.
func testBulk(t *testing.T, s store.Store) {
	defer s.Close()
	ctx := context.Background()
	b := s.NewBatch()
	defer b.Close()
	for id := range uint64(20) {
		b.AddPosting(id%4, id)
		b.PutDoc(id, []byte(fmt.Sprint("old", id)))
	}
	b.PutMeta("config", []byte("old"))
	commit(t, b)

	bulk := store.NewBulk(s)
	defer bulk.Close()
	bulk.RemovePosting(1, 5)      // present: removed
	bulk.AddPosting(1, 5)         // ...and added back: later wins
	bulk.RemovePosting(2, 6)      // present: removed
	bulk.AddPosting(9, 100)       // new
	bulk.AddPosting(9, 100)       // twice
	bulk.RemovePosting(9, 101)    // absent: a no-op
	bulk.AddPosting(3, 1000)      // added...
	bulk.RemovePosting(3, 1000)   // ...and removed: later wins
	bulk.PutDoc(7, []byte("new")) // overwrite
	bulk.DeleteDoc(8)
	bulk.PutDoc(8, []byte("back")) // delete then put
	bulk.DeleteDoc(9)              // delete
	bulk.PutDoc(50, []byte("a"))
	bulk.PutDoc(50, []byte("b")) // later wins
	bulk.PutMeta("config", []byte("new"))
	bulk.DeleteMeta("absent")
	if n := bulk.Len(); n != 16 {
		t.Errorf("Len = %d, want 16", n)
	}
	if got := postings(t, s, 9); len(got) != 0 {
		t.Errorf("bulk visible before Commit: %v", got)
	}
	commit(t, bulk)
	if bulk.Len() != 0 {
		t.Errorf("Len after Commit = %d", bulk.Len())
	}
	want := map[uint64][]uint64{
		0: {0, 4, 8, 12, 16}, 1: {1, 5, 9, 13, 17}, 2: {2, 10, 14, 18},
		3: {3, 7, 11, 15, 19}, 9: {100},
	}
	for key, ids := range want {
		if got := postings(t, s, key); !slices.Equal(got, ids) {
			t.Errorf("after the bulk, postings %d = %v, want %v", key, got, ids)
		}
	}
	_, recs := scanDocs(t, s)
	if len(recs) != 20 || recs[7] != "new" || recs[8] != "back" || recs[50] != "b" || recs[3] != "old3" {
		t.Errorf("after the bulk, documents = %v", recs)
	}
	if _, ok := recs[9]; ok {
		t.Error("document 9 deleted by the bulk is there")
	}
	if v, _, _ := s.Meta(ctx, "config", nil); string(v) != "new" {
		t.Errorf("after the bulk, meta = %q", v)
	}

	// Reuse, then Close discards.
	bulk.AddPosting(11, 1)
	commit(t, bulk)
	bulk.AddPosting(12, 1)
	bulk.Close()
	if got := postings(t, s, 11); !slices.Equal(got, []uint64{1}) {
		t.Errorf("reused bulk: %v", got)
	}
	if got := postings(t, s, 12); len(got) != 0 {
		t.Errorf("closed bulk applied: %v", got)
	}
	if err := bulk.Commit(ctx); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Commit of a closed bulk: %v", err)
	}
}

func testClosed(t *testing.T, s store.Store) {
	b := s.NewBatch()
	b.AddPosting(1, 1)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := s.Postings(context.Background(), 1, nil); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Postings after Close: %v", err)
	}
	if _, _, err := s.Doc(context.Background(), 1, nil); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Doc after Close: %v", err)
	}
	if err := s.ScanDocs(context.Background(), func(uint64, []byte) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Docs after Close: %v", err)
	}
	if err := b.Commit(context.Background()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Commit after Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
}
