package index

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// TestBulkModel builds indexes through Bulk (and through Adds large enough
// to take the store bulk) with names repeated within a call, across calls
// of one bulk, and replacing documents stored before the bulk, on Memory
// and on Pebble (with a bulk budget small enough to spill sorted runs),
// and walks the whole store against a model after every commit: the same
// records and postings as Adds would leave, nothing stale.
func TestBulkModel(t *testing.T) {
	defer func(n int) { bulkDocs = n }(bulkDocs)
	bulkDocs = 6
	opens := map[string]func() store.Store{
		"memory": func() store.Store { return store.NewMemory() },
		"pebble": func() store.Store {
			st, err := store.OpenPebble(t.TempDir(), &store.PebbleOptions{CacheBytes: 8 << 20, BulkBytes: 4 << 10})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			st := open()
			defer st.Close()
			x := mustOpen(t, st, minhashConfig(32, 5, lsh.Banding(4, 8), 0.5))
			_, sets := corpus(12, []float64{0.9, 0.5}, 78)
			r := rng.New(321)
			m := model{}
			names := make([]string, 60)
			for i := range names {
				names[i] = fmt.Sprintf("n%02d", i)
			}
			// batch makes a random call's documents and the result Add
			// must give for them against the model (pending: the names
			// staged but not committed count as stored, as the bulk
			// commits them before reading).
			batch := func(size uint64) ([]*Doc, AddResult) {
				var docs []*Doc
				want := AddResult{}
				seen := map[string]bool{}
				for range size {
					nm := names[r.Intn(uint64(len(names)))]
					docs = append(docs, mkDoc(t, x, nm, sets[r.Intn(uint64(len(sets)))], r.Intn(2) == 0))
					if seen[nm] {
						want.Duplicates++
					}
					seen[nm] = true
				}
				for nm := range seen {
					if m[nm] != nil {
						want.Replaced++
					} else {
						want.Added++
					}
				}
				return docs, want
			}
			for round := range 12 {
				// Some documents stored before the bulk, by plain Adds
				// (batches and, from 6 documents, the store bulk).
				docs, want := batch(1 + r.Intn(9))
				if got := mustAdd(t, x, docs...); got != want {
					t.Fatalf("round %d: Add = %+v, want %+v", round, got, want)
				}
				for _, d := range docs {
					m[d.Name] = d
				}
				m.walk(t, x, st)

				bk, err := x.NewBulk()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := x.NewBulk(); !errors.Is(err, ErrBulkOpen) {
					t.Fatalf("second NewBulk: %v, want ErrBulkOpen", err)
				}
				if _, err := x.Add(bg, docs[0]); !errors.Is(err, ErrBulkOpen) {
					t.Fatalf("Add during a bulk: %v, want ErrBulkOpen", err)
				}
				if _, err := x.Remove(bg, docs[0].Name); !errors.Is(err, ErrBulkOpen) {
					t.Fatalf("Remove during a bulk: %v, want ErrBulkOpen", err)
				}
				for range 1 + r.Intn(6) {
					docs, want := batch(1 + r.Intn(5))
					got, err := bk.Add(bg, docs...)
					if err != nil || got != want {
						t.Fatalf("round %d: Bulk.Add = %+v, %v; want %+v", round, got, err, want)
					}
					for _, d := range docs {
						m[d.Name] = d
					}
				}
				if err := bk.Commit(bg); err != nil {
					t.Fatal(err)
				}
				bk.Close()
				bk.Close()
				if _, err := bk.Add(bg, docs[0]); err == nil {
					t.Fatal("Add on a closed bulk succeeded")
				}
				m.walk(t, x, st)
				m.lookups(t, x, sets)
				if round%4 == 3 {
					if err := x.Flush(bg); err != nil {
						t.Fatal(err)
					}
					x = mustOpen(t, st, Config{})
				}
			}
		})
	}
}

// TestBulkFailure: a document whose sketch was made with another
// configuration fails its Bulk.Add; everything staged since the last
// commit is discarded, Commit reports the failure once, and the bulk goes
// on.
func TestBulkFailure(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, minhashConfig(32, 5, lsh.Banding(4, 8), 0.5))
	_, sets := corpus(4, nil, 1)
	bk, err := x.NewBulk()
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	kept := mkDoc(t, x, "kept", sets[0], false)
	if _, err := bk.Add(bg, kept); err != nil {
		t.Fatal(err)
	}
	if err := bk.Commit(bg); err != nil {
		t.Fatal(err)
	}
	staged := mkDoc(t, x, "staged", sets[1], false)
	good := mkDoc(t, x, "good", sets[2], false)
	bad := mkDoc(t, x, "bad", sets[3], false)
	bad.Sketch.Header = sketch.Header{Algorithm: sketch.MinHash, K: 32, Seed: 6}
	if _, err := bk.Add(bg, staged); err != nil {
		t.Fatal(err)
	}
	if _, err := bk.Add(bg, good, bad); err == nil {
		t.Fatal("Bulk.Add accepted a sketch of another configuration")
	}
	if _, err := bk.Add(bg, good); err == nil {
		t.Fatal("Bulk.Add after a failure succeeded before Commit reported it")
	}
	if err := bk.Commit(bg); err == nil {
		t.Fatal("Commit after a failed Add succeeded")
	}
	model{"kept": kept}.walk(t, x, st)
	if _, err := bk.Add(bg, good); err != nil {
		t.Fatal(err)
	}
	if err := bk.Commit(bg); err != nil {
		t.Fatal(err)
	}
	model{"kept": kept, "good": good}.walk(t, x, st)
}

// TestSortedBulkModel builds an index on Pebble through sorted bulks
// (NewSortedBulk: the records straight into tables) whose documents come
// in increasing id order, over documents stored before each bulk that it
// replaces, and walks the whole store against a model after every commit;
// then a bulk given a document out of order fails its Commit and leaves
// the store as it was.
func TestSortedBulkModel(t *testing.T) {
	defer func(n int) { bulkDocs = n }(bulkDocs)
	bulkDocs = 6
	st, err := store.OpenPebble(t.TempDir(), &store.PebbleOptions{CacheBytes: 8 << 20, BulkBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	x := mustOpen(t, st, minhashConfig(32, 5, lsh.Banding(4, 8), 0.5))
	_, sets := corpus(12, []float64{0.9, 0.5}, 78)
	r := rng.New(654)
	m := model{}
	names := make([]string, 80)
	for i := range names {
		names[i] = fmt.Sprintf("n%02d", i)
	}
	pick := func(n int) []*Doc {
		seen := map[string]bool{}
		var docs []*Doc
		for len(docs) < n {
			nm := names[r.Intn(uint64(len(names)))]
			if !seen[nm] {
				seen[nm] = true
				docs = append(docs, mkDoc(t, x, nm, sets[r.Intn(uint64(len(sets)))], r.Intn(2) == 0))
			}
		}
		slices.SortFunc(docs, func(a, b *Doc) int { return cmp.Compare(ID(a.Name), ID(b.Name)) })
		return docs
	}
	for round := range 8 {
		pre := pick(1 + int(r.Intn(5)))
		mustAdd(t, x, pre...)
		for _, d := range pre {
			m[d.Name] = d
		}
		bk, err := x.NewSortedBulk()
		if err != nil {
			t.Fatal(err)
		}
		docs := pick(10 + int(r.Intn(30)))
		for lo := 0; lo < len(docs); {
			hi := min(len(docs), lo+1+int(r.Intn(8)))
			want := AddResult{}
			for _, d := range docs[lo:hi] {
				if m[d.Name] != nil {
					want.Replaced++
				} else {
					want.Added++
				}
			}
			got, err := bk.Add(bg, docs[lo:hi]...)
			if err != nil || got != want {
				t.Fatalf("round %d: Bulk.Add = %+v, %v; want %+v", round, got, err, want)
			}
			for _, d := range docs[lo:hi] {
				m[d.Name] = d
			}
			lo = hi
		}
		if err := bk.Commit(bg); err != nil {
			t.Fatal(err)
		}
		bk.Close()
		m.walk(t, x, st)
		m.lookups(t, x, sets)
	}
	bk, err := x.NewSortedBulk()
	if err != nil {
		t.Fatal(err)
	}
	docs := pick(20)
	if _, err := bk.Add(bg, docs[10:]...); err != nil {
		t.Fatal(err)
	}
	if _, err := bk.Add(bg, docs[:10]...); err != nil {
		t.Fatal(err)
	}
	if err := bk.Commit(bg); err == nil {
		t.Fatal("a sorted bulk given documents out of order committed")
	}
	bk.Close()
	m.walk(t, x, st)
}

// A name given again to a sorted Bulk commits what is staged first, as in
// any Bulk, whether the names so far came in order (the staged ids are
// searched) or not (a small sorted Bulk commits through a batch, which does
// not check the order, so the Bulk must still see the repeat): either way
// no posting of the replaced document is left behind.
func TestSortedBulkRepeat(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, minhashConfig(32, 5, lsh.Banding(4, 8), 0.5))
	_, sets := corpus(8, nil, 91)
	names := []string{"a", "b", "c", "d"}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(ID(a), ID(b)) })
	doc := func(i, set int) *Doc { return mkDoc(t, x, names[i], sets[set], false) }
	for _, c := range []struct {
		name  string
		calls [][]*Doc
	}{
		{"in order", [][]*Doc{{doc(0, 0), doc(1, 1)}, {doc(2, 2)}, {doc(1, 3)}}},
		{"out of order", [][]*Doc{{doc(2, 0)}, {doc(0, 1), doc(3, 2)}, {doc(2, 4)}, {doc(0, 5)}}},
	} {
		bk, err := x.NewSortedBulk()
		if err != nil {
			t.Fatal(err)
		}
		m := model{}
		for _, d := range c.calls {
			if _, err := bk.Add(bg, d...); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for _, d := range d {
				m[d.Name] = d
			}
		}
		if err := bk.Commit(bg); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		bk.Close()
		m.walk(t, x, st)
		if _, err := x.Remove(bg, names...); err != nil {
			t.Fatal(err)
		}
	}
}

// idSet holds what a map holds, across the merges of its runs and a
// clear: 20,000 ids (78 tails, runs merged up to 19,968 ids), each looked
// up before and after its add, and absent ids looked up throughout.
func TestIDSet(t *testing.T) {
	var s idSet
	model := map[uint64]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 2 {
		for i := range 20000 {
			id := r.Uint64()
			if s.has(id) {
				t.Fatalf("round %d, id %d: held before its add", round, i)
			}
			s.add(id)
			model[id] = true
			if !s.has(id) {
				t.Fatalf("round %d, id %d: not held after its add", round, i)
			}
			if i%97 == 0 {
				for m := range model {
					if !s.has(m) {
						t.Fatalf("round %d, after %d ids: lost %x", round, i, m)
					}
					break
				}
			}
		}
		for m := range model {
			if !s.has(m) {
				t.Fatalf("round %d: lost %x", round, m)
			}
		}
		for i := 1; i < len(s.runs); i++ {
			if len(s.runs[i-1]) < 2*len(s.runs[i]) || !slices.IsSorted(s.runs[i]) {
				t.Fatalf("round %d: runs of %d and %d ids", round, len(s.runs[i-1]), len(s.runs[i]))
			}
		}
		s.clear()
		for m := range model {
			if s.has(m) {
				t.Fatalf("round %d: %x held after clear", round, m)
			}
		}
		clear(model)
	}
}
