package index

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// TestMemPostingsModel runs random adds and removes of (key, id) postings
// against the in-memory table and a map, over few keys (long posting
// lists), keys of few bits (crowded home slots) and many ids, so that
// probe runs wrap around the table, growth rehashes them and backward-shift
// deletion moves slots; after every step batch each key's lookup must
// give exactly the model's ids.
func TestMemPostingsModel(t *testing.T) {
	r := rng.New(5)
	tb := newMemPostings()
	model := map[uint64]map[uint64]bool{}
	keys := make([]uint64, 300)
	for i := range keys {
		keys[i] = r.Uint64() >> (r.Intn(3) * 24) // 64, 40 and 16-bit keys
	}
	keys[0] = 0
	n := 0
	for step := range 60_000 {
		k := keys[r.Intn(uint64(len(keys)))]
		id := r.Uint64() % 3000
		if r.Intn(5) < 3 {
			if err := tb.add(k, id); err != nil {
				t.Fatal(err)
			}
			if model[k] == nil {
				model[k] = map[uint64]bool{}
			}
			if !model[k][id] {
				n++
			}
			model[k][id] = true
		} else {
			tb.remove(k, id)
			if model[k][id] {
				n--
			}
			delete(model[k], id)
		}
		if step%1000 != 999 {
			continue
		}
		if tb.used != n {
			t.Fatalf("step %d: %d postings, model %d", step, tb.used, n)
		}
		// All keys at once: lookupMany works in groups of 32.
		seen := 0
		err := tb.lookupMany(keys, func(i int, ids []uint64) error {
			if i != seen {
				t.Fatalf("step %d: key %d after %d", step, i, seen-1)
			}
			seen++
			got := slices.Sorted(slices.Values(ids))
			want := slices.Sorted(maps.Keys(model[keys[i]]))
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: key %x: %v, model %v", step, keys[i], got, want)
			}
			return nil
		})
		if err != nil || seen != len(keys) {
			t.Fatalf("step %d: %d keys seen, %v", step, seen, err)
		}
		// Every document number in use is counted once per posting.
		refs := 0
		for id, num := range tb.num {
			if tb.ids[num-1] != id || tb.refs[num-1] == 0 {
				t.Fatalf("step %d: id %d: number %d holds %d with %d postings", step, id, num, tb.ids[num-1], tb.refs[num-1])
			}
			refs += int(tb.refs[num-1])
		}
		if refs != n {
			t.Fatalf("step %d: %d references, %d postings", step, refs, n)
		}
	}
}

// TestLoadPostings serves queries from the in-memory postings while
// random adds, replacements and removals go on, and compares them after
// every few steps with the store: the table holds exactly the store's
// postings, and every query gives the same matches as an Index over the
// same store that reads its postings from there. A Bulk drops the table.
func TestLoadPostings(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open()
			defer st.Close()
			cfg := minhashConfig(32, 5, lsh.Banding(4, 8), 0.5)
			x := mustOpen(t, st, cfg)
			_, sets := corpus(12, []float64{0.9, 0.5}, 78)
			for i := range 10 {
				mustAdd(t, x, mkDoc(t, x, fmt.Sprintf("n%02d", i), sets[i], true))
			}
			loaded, err := x.LoadPostings(bg)
			if err != nil {
				t.Fatal(err)
			}
			plain := mustOpen(t, st, Config{}) // reads postings from the store
			r := rng.New(9)
			for step := range 600 {
				nm := fmt.Sprintf("n%02d", r.Intn(30))
				if r.Intn(3) < 2 {
					mustAdd(t, x, mkDoc(t, x, nm, sets[r.Intn(uint64(len(sets)))], r.Intn(2) == 0))
				} else if _, err := x.Remove(bg, nm); err != nil {
					t.Fatal(err)
				}
				if step%25 != 0 {
					continue
				}
				comparePostings(t, x, st)
				for _, s := range sets {
					q := mkDoc(t, x, "query", s, false)
					a, err := x.Query(bg, nil, q, "")
					if err != nil {
						t.Fatal(err)
					}
					b, err := plain.Query(bg, nil, q, "")
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(a, b) {
						t.Fatalf("step %d: from memory %v, from the store %v", step, a, b)
					}
				}
			}
			if loaded == 0 || x.mem.Load() == nil {
				t.Fatalf("loaded %d postings", loaded)
			}
			k, err := x.NewBulk()
			if err != nil {
				t.Fatal(err)
			}
			k.Close()
			if x.mem.Load() != nil {
				t.Fatal("a Bulk left the in-memory postings in place")
			}
		})
	}
}

// comparePostings checks that x's in-memory table holds exactly st's
// postings.
func comparePostings(t *testing.T, x *Index, st store.Store) {
	t.Helper()
	tb := x.mem.Load()
	n := 0
	err := st.ScanPostings(bg, func(key, id uint64) error {
		n++
		found := false
		_ = tb.lookupMany([]uint64{key}, func(_ int, ids []uint64) error {
			found = slices.Contains(ids, id)
			return nil
		})
		if !found {
			return fmt.Errorf("posting %x -> %x missing from memory", key, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tb.postings() != n {
		t.Fatalf("%d postings in memory, %d in the store", tb.postings(), n)
	}
}

func TestLoadPostingsRefusesShared(t *testing.T) {
	x := mustOpen(t, sharedStore{store.NewMemory()}, Config{})
	if _, err := x.LoadPostings(bg); err == nil {
		t.Fatal("LoadPostings accepted a shared store")
	}
}

type sharedStore struct{ store.Store }

func (s sharedStore) Capabilities() store.Capabilities {
	c := s.Store.Capabilities()
	c.Shared = true
	return c
}

// TestSortIDs: the bucket sort agrees with slices.Sort, on uniform hashes,
// on skewed values (one crowded bucket), with duplicates, and below its
// cut-over.
func TestSortIDs(t *testing.T) {
	r := rng.New(21)
	for _, n := range []int{0, 1, 5, 63, 64, 296, 1000, 5000} {
		for _, mask := range []uint64{^uint64(0), 0xff, 0xff00ff0000000000, 3} {
			a := make([]uint64, n)
			for i := range a {
				a[i] = r.Uint64() & mask
			}
			want := slices.Clone(a)
			slices.Sort(want)
			sortIDs(a, make([]uint64, n))
			if !slices.Equal(a, want) {
				t.Fatalf("n %d mask %x: not sorted", n, mask)
			}
		}
	}
}

func BenchmarkSortIDs(b *testing.B) {
	r := rng.New(22)
	src := make([]uint64, 296)
	for i := range src {
		src[i] = r.Uint64()
	}
	a, tmp := make([]uint64, len(src)), make([]uint64, len(src))
	for _, name := range []string{"buckets", "slices"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				copy(a, src)
				if name == "buckets" {
					sortIDs(a, tmp)
				} else {
					slices.Sort(a)
				}
			}
		})
	}
}
