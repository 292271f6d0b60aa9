package index

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// model is what the store must hold: the current document of each name.
type model map[string]*Doc

// walk reads the whole store and compares it with the model: the records
// are exactly the model's documents, the postings exactly the postings
// they make (LSH keys and fingerprints: no stale posting of any kind, none
// missing), and the configuration is recorded. Check must agree.
func (m model) walk(t *testing.T, x *Index, st store.Store) {
	t.Helper()
	wantDocs := map[uint64]string{}
	wantPost := map[[2]uint64]bool{}
	for name, d := range m {
		id := ID(name)
		wantDocs[id] = name
		keys, err := x.postingsOf(nil, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			wantPost[[2]uint64{k, id}] = true
		}
	}
	gotDocs := map[uint64]string{}
	err := st.ScanDocs(bg, func(id uint64, rec []byte) error {
		d, err := DecodeDoc(rec)
		if err != nil {
			return err
		}
		want := m[d.Name]
		if want == nil || !slices.Equal(d.Sketch.Values, want.Sketch.Values) || d.Fingerprint != want.Fingerprint || !slices.Equal(d.Features, want.Features) {
			return fmt.Errorf("record %q differs from the model", d.Name)
		}
		gotDocs[id] = d.Name
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(gotDocs, wantDocs) {
		t.Fatalf("records %v, model %v", gotDocs, wantDocs)
	}
	gotPost := map[[2]uint64]bool{}
	err = st.ScanPostings(bg, func(key, id uint64) error {
		if !wantPost[[2]uint64{key, id}] {
			return fmt.Errorf("stale posting %016x -> %q", key, gotDocs[id])
		}
		gotPost[[2]uint64{key, id}] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotPost) != len(wantPost) {
		t.Fatalf("%d postings, the model makes %d", len(gotPost), len(wantPost))
	}
	if _, ok, err := st.Meta(bg, configMeta, nil); !ok || err != nil {
		t.Fatalf("configuration not recorded: %v", err)
	}
	checkClean(t, x)
}

// TestModel runs random sequences of adds (with repeated names within a
// batch), replacements and removals against Memory and Pebble stores and
// walks the whole store against a model after every few steps: no stale
// posting of any kind, every posting's id has a record that makes it. It
// also checks exact-fingerprint lookups and queries against the model.
func TestModel(t *testing.T) {
	steps := 2000
	if testing.Short() {
		steps = 300
	}
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open()
			defer st.Close()
			x := mustOpen(t, st, minhashConfig(32, 5, lsh.Banding(4, 8), 0.5))
			_, sets := corpus(12, []float64{0.9, 0.5}, 77) // 36 bodies, some near each other
			r := rng.New(123)
			m := model{}
			names := make([]string, 40)
			for i := range names {
				names[i] = fmt.Sprintf("n%02d", i)
			}
			for step := 0; step < steps; step++ {
				switch op := r.Intn(10); {
				case op < 6: // add a batch, names may repeat
					var batch []*Doc
					want := AddResult{}
					seen := map[string]bool{}
					for range 1 + r.Intn(5) {
						nm := names[r.Intn(uint64(len(names)))]
						batch = append(batch, mkDoc(t, x, nm, sets[r.Intn(uint64(len(sets)))], r.Intn(2) == 0))
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
					got := mustAdd(t, x, batch...)
					if got != want {
						t.Fatalf("step %d: Add = %+v, want %+v", step, got, want)
					}
					for _, d := range batch {
						m[d.Name] = d
					}
				case op < 9: // remove some names
					var rm []string
					want := 0
					gone := map[string]bool{}
					for range 1 + r.Intn(3) {
						nm := names[r.Intn(uint64(len(names)))]
						rm = append(rm, nm)
						if m[nm] != nil && !gone[nm] {
							want++
						}
						gone[nm] = true
					}
					n, err := x.Remove(bg, rm...)
					if err != nil || n != want {
						t.Fatalf("step %d: Remove = %d, %v; want %d", step, n, err, want)
					}
					for _, nm := range rm {
						delete(m, nm)
					}
				default: // flush the fingerprint filter
					if err := x.Flush(bg); err != nil {
						t.Fatal(err)
					}
				}
				if step%50 == 49 || step == steps-1 {
					m.walk(t, x, st)
					m.lookups(t, x, sets)
				}
				if step%500 == 250 {
					// A new Index over the same store (a restart, with or
					// without a flushed filter) sees the same.
					x = mustOpen(t, st, Config{})
				}
			}
		})
	}
}

// lookups checks Identical and Query against the model.
func (m model) lookups(t *testing.T, x *Index, sets [][]uint64) {
	t.Helper()
	for _, s := range sets {
		q := mkDoc(t, x, "query", s, false)
		var want string
		for _, nm := range slices.Sorted(maps.Keys(m)) {
			if d := m[nm]; d.Fingerprint == q.Fingerprint && (want == "" || ID(nm) < ID(want)) {
				want = nm
			}
		}
		got := ""
		if _, err := x.Identical(bg, []identity.Fingerprint{q.Fingerprint}, nil, func(_ int, id uint64, name string) error {
			if id != ID(name) {
				t.Fatalf("Identical: id %x of %q", id, name)
			}
			got = name
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Identical: %q, model %q", got, want)
		}
		ms, err := x.Query(bg, nil, q, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, mt := range ms {
			if d := m[mt.Name]; d == nil {
				t.Fatalf("Query found %q, which the model does not hold", mt.Name)
			}
		}
		if want != "" && !slices.ContainsFunc(ms, func(mt Match) bool { return mt.Estimate.J == 1 }) {
			t.Fatalf("Query missed an identical document (%q)", want)
		}
	}
}
