// Package storetest provides the conformance suite for store.Store
// implementations: every implementation (memory, Pebble, and later Redis)
// runs Run from its own tests, so they all behave exactly like the
// in-memory reference.
//
// It checks posting-set semantics (idempotent adds, removes, increasing
// order), documents and metadata, batch atomicity and reuse, iteration
// order, concurrent commits and reads under the race detector, errors after
// Close, and a randomized comparison with a model over many operations. It
// is not a benchmark and not a crash test (those depend on the backend).
package storetest

import (
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
	t.Run("Batch", func(t *testing.T) { testBatch(t, open(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, open(t)) })
	t.Run("Model", func(t *testing.T) { testModel(t, open(t)) })
	t.Run("Closed", func(t *testing.T) { testClosed(t, open(t)) })
}

func commit(t *testing.T, b store.Batch) {
	t.Helper()
	if err := b.Commit(context.Background()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

func postings(t *testing.T, s store.Store, key uint64) []uint64 {
	t.Helper()
	ids, err := s.Postings(context.Background(), key, nil)
	if err != nil {
		t.Fatalf("Postings(%x): %v", key, err)
	}
	return ids
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
	var ids []uint64
	var recs []string
	err := s.ScanDocs(context.Background(), func(id uint64, rec []byte) error {
		ids = append(ids, id)
		recs = append(recs, string(rec))
		return nil
	})
	if err != nil || !slices.Equal(ids, []uint64{2, 300, 1 << 40}) || !slices.Equal(recs, []string{"two", "hello", ""}) {
		t.Errorf("Docs = %v %q %v", ids, recs, err)
	}
	stop := errors.New("stop")
	n := 0
	if err := s.ScanDocs(context.Background(), func(uint64, []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Docs stopping: %v after %d", err, n)
	}
	// fn may commit while iterating
	err = s.ScanDocs(context.Background(), func(id uint64, rec []byte) error {
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
				if err != nil || !slices.IsSorted(ids) {
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

// testModel applies random operations in random batches and compares every
// lookup with a map-based model.
func testModel(t *testing.T, s store.Store) {
	defer s.Close()
	st := rng.New(rng.Key(77, 1))
	model := map[uint64]map[uint64]bool{}
	docs := map[uint64]string{}
	b := s.NewBatch()
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
		var got []uint64
		s.ScanDocs(context.Background(), func(id uint64, rec []byte) error {
			got = append(got, id)
			if docs[id] != string(rec) {
				t.Fatalf("round %d doc %d = %q, want %q", round, id, rec, docs[id])
			}
			return nil
		})
		if want := slices.Sorted(maps.Keys(docs)); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("round %d docs %v, want %v", round, got, want)
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
