package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// errInjected is the fault faultStore injects.
var errInjected = errors.New("injected I/O error")

// faultStore wraps a store and fails the n-th call of one method (counted
// from when it was armed), the way a disk or network fails: reads return
// the error, a failed Commit applies nothing.
type faultStore struct {
	store.Store
	mu     sync.Mutex
	method string
	n      int
	calls  map[string]int
	fired  bool
}

func (f *faultStore) arm(method string, n int) {
	f.mu.Lock()
	f.method, f.n, f.calls, f.fired = method, n, map[string]int{}, false
	f.mu.Unlock()
}

func (f *faultStore) fail(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		return nil
	}
	f.calls[method]++
	if method == f.method && f.calls[method] == f.n {
		f.fired = true
		return fmt.Errorf("%s: %w", method, errInjected)
	}
	return nil
}

func (f *faultStore) Postings(ctx context.Context, key uint64, dst []uint64) ([]uint64, error) {
	if err := f.fail("Postings"); err != nil {
		return dst, err
	}
	return f.Store.Postings(ctx, key, dst)
}

func (f *faultStore) LookupPostings(ctx context.Context, keys []uint64, fn func(int, []uint64) error) error {
	if err := f.fail("LookupPostings"); err != nil {
		return err
	}
	return f.Store.LookupPostings(ctx, keys, fn)
}

func (f *faultStore) Doc(ctx context.Context, id uint64, dst []byte) ([]byte, bool, error) {
	if err := f.fail("Doc"); err != nil {
		return dst, false, err
	}
	return f.Store.Doc(ctx, id, dst)
}

func (f *faultStore) LookupDocs(ctx context.Context, ids []uint64, fn func(int, []byte, bool) error) error {
	if err := f.fail("LookupDocs"); err != nil {
		return err
	}
	return f.Store.LookupDocs(ctx, ids, fn)
}

// ScanDocs fails at its start or, as "ScanDocs/mid", after the first record.
func (f *faultStore) ScanDocs(ctx context.Context, fn func(uint64, []byte) error) error {
	if err := f.fail("ScanDocs"); err != nil {
		return err
	}
	first := true
	return f.Store.ScanDocs(ctx, func(id uint64, rec []byte) error {
		if !first {
			if err := f.fail("ScanDocs/mid"); err != nil {
				return err
			}
		}
		first = false
		return fn(id, rec)
	})
}

func (f *faultStore) ScanPostings(ctx context.Context, fn func(uint64, uint64) error) error {
	if err := f.fail("ScanPostings"); err != nil {
		return err
	}
	return f.Store.ScanPostings(ctx, fn)
}

func (f *faultStore) Meta(ctx context.Context, name string, dst []byte) ([]byte, bool, error) {
	if err := f.fail("Meta"); err != nil {
		return dst, false, err
	}
	return f.Store.Meta(ctx, name, dst)
}

func (f *faultStore) NewBatch() store.Batch { return &faultBatch{Batch: f.Store.NewBatch(), f: f} }

type faultBatch struct {
	store.Batch
	f *faultStore
}

func (b *faultBatch) Commit(ctx context.Context) error {
	if err := b.f.fail("Commit"); err != nil {
		return err
	}
	return b.Batch.Commit(ctx)
}

var faultMethods = []string{"Postings", "LookupPostings", "Doc", "LookupDocs", "ScanDocs", "ScanDocs/mid", "ScanPostings", "Meta", "Commit"}

// TestStoreFaults runs every index operation against a store that fails
// the n-th call of each method, for every n the operation reaches: the
// operation returns a one-line error naming the cause (no panic, no
// silent success), and the store is left consistent — Check finds nothing
// wrong, and it holds either the state before the operation or after it.
func TestStoreFaults(t *testing.T) {
	_, sets := corpus(6, []float64{0.9}, 31)
	cfg := minhashConfig(32, 5, lsh.Banding(4, 8), 0.5)
	// setup builds the same store every time: six documents, one
	// replaced, the filter flushed, then two more added (so the filter is
	// stale and a new Index rebuilds it).
	setup := func(t *testing.T) (*faultStore, *Index, model) {
		fs := &faultStore{Store: store.NewMemory()}
		x := mustOpen(t, fs, cfg)
		m := model{}
		var docs []*Doc
		for i := range 6 {
			docs = append(docs, mkDoc(t, x, fmt.Sprintf("d%d", i), sets[i], i%2 == 0))
		}
		docs = append(docs, mkDoc(t, x, "d0", sets[7], true))
		mustAdd(t, x, docs...)
		if err := x.Flush(bg); err != nil {
			t.Fatal(err)
		}
		more := []*Doc{mkDoc(t, x, "d6", sets[8], false), mkDoc(t, x, "d7", sets[9], true)}
		mustAdd(t, x, more...)
		for _, d := range append(docs, more...) {
			m[d.Name] = d
		}
		return fs, mustOpen(t, fs, Config{}), m
	}
	type op struct {
		name string
		run  func(x *Index, fs *faultStore) error
		// after returns the model once the operation succeeded.
		after func(x *Index, m model) model
	}
	same := func(_ *Index, m model) model { return m }
	ops := []op{
		{"Open", func(_ *Index, fs *faultStore) error { _, err := Open(bg, fs, Config{}); return err }, same},
		{"Add", func(x *Index, _ *faultStore) error {
			_, err := x.Add(bg, mkDoc(t, x, "d1", sets[10], true), mkDoc(t, x, "new", sets[11], false))
			return err
		}, func(x *Index, m model) model {
			m = cloneModel(m)
			m["d1"], m["new"] = mkDoc(t, x, "d1", sets[10], true), mkDoc(t, x, "new", sets[11], false)
			return m
		}},
		{"Bulk", func(x *Index, _ *faultStore) error {
			bk, err := x.NewBulk()
			if err != nil {
				return err
			}
			defer bk.Close()
			if _, err := bk.Add(bg, mkDoc(t, x, "d1", sets[10], true), mkDoc(t, x, "new", sets[11], false)); err != nil {
				return err
			}
			if _, err := bk.Add(bg, mkDoc(t, x, "d3", sets[1], false)); err != nil {
				return err
			}
			return bk.Commit(bg)
		}, func(x *Index, m model) model {
			m = cloneModel(m)
			m["d1"], m["new"], m["d3"] = mkDoc(t, x, "d1", sets[10], true), mkDoc(t, x, "new", sets[11], false), mkDoc(t, x, "d3", sets[1], false)
			return m
		}},
		{"Remove", func(x *Index, _ *faultStore) error { _, err := x.Remove(bg, "d2", "d7"); return err },
			func(_ *Index, m model) model { m = cloneModel(m); delete(m, "d2"); delete(m, "d7"); return m }},
		{"Query", func(x *Index, _ *faultStore) error {
			_, err := x.Query(bg, nil, mkDoc(t, x, "q", sets[1], true), "")
			return err
		}, same},
		{"Get", func(x *Index, _ *faultStore) error { _, _, err := x.Get(bg, "d3"); return err }, same},
		{"Identical", func(x *Index, _ *faultStore) error {
			_, err := x.Identical(bg, []identity.Fingerprint{mkDoc(t, x, "q", sets[3], false).Fingerprint, {Hi: 42}}, nil, func(int, uint64, string) error { return nil })
			return err
		}, same},
		{"Flush", func(x *Index, _ *faultStore) error {
			if _, err := x.Add(bg, mkDoc(t, x, "f", sets[4], false)); err != nil {
				return err
			}
			return x.Flush(bg)
		}, nil},
		{"Check", func(x *Index, _ *faultStore) error { _, err := x.Check(bg, true); return err }, same},
		{"Check/repair", func(x *Index, fs *faultStore) error {
			// Damage to repair, written around the fault counter.
			b := fs.Store.NewBatch()
			b.AddPosting(42, ID("gone"))
			b.PutDoc(ID("junk"), []byte{9, 9})
			b.PutMeta(legacyFilterMeta, []byte{1})
			b.RemovePosting(idKey(mkDoc(t, x, "", sets[1], false).Fingerprint), ID("d1"))
			if err := b.Commit(bg); err != nil {
				return err
			}
			r, err := x.Check(bg, true)
			if err == nil && (r.Stale != 1 || r.Corrupt != 1 || r.Lost != 1 || r.Missing != 1 || r.Metadata != 1 || !r.Repaired) {
				return fmt.Errorf("repair report %+v", r)
			}
			return err
		}, nil},
	}
	for _, o := range ops {
		faults := 0
		for _, method := range faultMethods {
			for n := 1; ; n++ {
				fs, x, m := setup(t)
				fs.arm(method, n)
				err := o.run(x, fs)
				fired := fs.fired
				fs.arm("", 0)
				if !fired {
					if err != nil {
						t.Fatalf("%s without a fault: %v", o.name, err)
					}
					break
				}
				faults++
				if err == nil || !errors.Is(err, errInjected) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%s with %s #%d failing: err = %v, want a one-line error wrapping the fault", o.name, method, n, err)
				}
				// Consistent, and before or after.
				y := mustOpen(t, fs.Store, Config{})
				if o.name == "Check/repair" {
					if _, err := y.Check(bg, true); err != nil {
						t.Fatalf("repair after a failed repair: %v", err)
					}
				}
				checkClean(t, y)
				if o.after != nil && !m.equal(y, fs.Store) && !o.after(y, m).equal(y, fs.Store) {
					t.Fatalf("%s with %s #%d failing: the store is neither before nor after", o.name, method, n)
				}
			}
		}
		t.Logf("%s: %d faults injected, each one reported", o.name, faults)
		if faults == 0 {
			t.Errorf("%s: no store call to fail", o.name)
		}
	}
}

func cloneModel(m model) model {
	c := model{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

// equal reports whether the store holds exactly m's records and postings.
func (m model) equal(x *Index, st store.Store) bool { return m.matches(x, st) == nil }

// matches is walk without the test: nil when the store holds m exactly.
func (m model) matches(x *Index, st store.Store) error {
	want := map[[2]uint64]bool{}
	for name, d := range m {
		keys, err := x.postingsOf(nil, d)
		if err != nil {
			return err
		}
		for _, k := range keys {
			want[[2]uint64{k, ID(name)}] = true
		}
	}
	n := 0
	err := st.ScanDocs(bg, func(id uint64, rec []byte) error {
		d, err := DecodeDoc(rec)
		if err != nil {
			return err
		}
		if w := m[d.Name]; w == nil || w.Fingerprint != d.Fingerprint {
			return fmt.Errorf("record %q", d.Name)
		}
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n != len(m) {
		return fmt.Errorf("%d records, model %d", n, len(m))
	}
	p := 0
	err = st.ScanPostings(bg, func(key, id uint64) error {
		if !want[[2]uint64{key, id}] {
			return fmt.Errorf("posting %x %x", key, id)
		}
		p++
		return nil
	})
	if err != nil {
		return err
	}
	if p != len(want) {
		return fmt.Errorf("%d postings, model %d", p, len(want))
	}
	return nil
}
