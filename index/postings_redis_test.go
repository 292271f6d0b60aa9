package index

import (
	"fmt"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/redis"
	"github.com/neardup/neardup/store/redis/redistest"
)

// TestLoadPostingsFollowsJournal: two indexes over one Redis prefix (two
// servers) keep their postings in memory; each writes at random, and
// every query on either, right after a write on the other, gives the
// matches an index reading the postings from Redis gives. A third index
// loaded late replays the journal to the same postings. The journal's
// notes keep both collapse tables equal to the stored documents.
func TestLoadPostingsFollowsJournal(t *testing.T) {
	url := redistest.Start(t).URL()
	open := func() store.Store {
		st, err := redis.Open(bg, url, &redis.Options{Prefix: "follow"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	cfg := minhashConfig(32, 5, lsh.Banding(4, 8), 0.5)
	st := open()
	a := mustOpen(t, st, cfg)
	b := mustOpen(t, open(), Config{})
	plain := mustOpen(t, open(), Config{})
	var cols []*Collapser
	for _, x := range []*Index{a, b} {
		c, err := x.NewCollapser(CollapseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
		if _, err := x.LoadPostings(bg); err != nil {
			t.Fatal(err)
		}
		if x.mem.Load() == nil || x.mem.Load().follow == nil {
			t.Fatal("not following the journal")
		}
	}
	_, sets := corpus(10, []float64{0.9, 0.6}, 79)
	r := rng.New(10)
	for step := range 300 {
		w, o := a, b
		if r.Intn(2) == 0 {
			w, o = b, a
		}
		nm := fmt.Sprintf("n%02d", r.Intn(25))
		if r.Intn(3) < 2 {
			mustAdd(t, w, mkDoc(t, w, nm, sets[r.Intn(uint64(len(sets)))], r.Intn(2) == 0))
		} else if _, err := w.Remove(bg, nm); err != nil {
			t.Fatal(err)
		}
		q := mkDoc(t, o, "query", sets[r.Intn(uint64(len(sets)))], false)
		for _, x := range []*Index{o, w} {
			got, err := x.Query(bg, nil, q, "")
			if err != nil {
				t.Fatal(err)
			}
			want, err := plain.Query(bg, nil, q, "")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: from memory %v, from Redis %v", step, got, want)
			}
		}
	}
	// Both collapse tables hold the signatures of exactly the stored
	// documents, whoever wrote them (the journal's notes).
	for _, x := range []*Index{a, b} {
		if err := x.followJournal(bg); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 25 {
		nm := fmt.Sprintf("n%02d", i)
		d, stored, err := plain.Get(bg, nm)
		if err != nil {
			t.Fatal(err)
		}
		var want []uint16
		if stored {
			want, _ = cols[0].t.Signature(nil, d.Sketch.Values)
		}
		for k, c := range cols {
			got, ok := c.t.Get(nil, ID(nm))
			if ok != stored || !slices.Equal(got, want) {
				t.Errorf("collapse table %d: %s: %v %v, stored %v %v", k, nm, got, ok, want, stored)
			}
		}
	}
	late := mustOpen(t, open(), Config{})
	if _, err := late.LoadPostings(bg); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Index{a, b, late} {
		if err := x.mem.Load().sync(bg, x.mem.Load().follow.began); err != nil {
			t.Fatal(err)
		}
		comparePostings(t, x, st)
	}
}

// An index created before its store was journaled (here: a prefix whose
// journal marker is missing) is not loaded from the journal.
func TestLoadPostingsNeedsWholeJournal(t *testing.T) {
	url := redistest.Start(t).URL()
	st, err := redis.Open(bg, url, &redis.Options{Prefix: "old"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	x := mustOpen(t, st, Config{})
	b := st.NewBatch()
	b.DeleteMeta(journalMeta)
	if err := b.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := x.LoadPostings(bg); err == nil {
		t.Fatal("loaded from a journal without the whole history")
	}
}
