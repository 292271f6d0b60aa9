package index_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/corpus/corpustest"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/store"
)

// licences indexes the shipped corpus (testdata/licenses: 474 texts; every
// pair with exact 5-shingle Jaccard >= 0.5 is listed in pairs.jsonl.gz,
// all others are below 0.5) at threshold thr, with feature sets, in st.
func licences(t testing.TB, st store.Store, thr float64) (*index.Index, []*index.Doc, []corpustest.Pair) {
	t.Helper()
	raw := corpustest.Docs(t, "../testdata/licenses")
	pairs := corpustest.Pairs(t, "../testdata/licenses")
	x, err := index.Open(ctx, st, index.Config{Threshold: thr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := x.NewSketcher()
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]*index.Doc, len(raw))
	for i, d := range raw {
		var sk sample.Sketched
		s.Sketch(&sk, []byte(d.Text), false)
		docs[i] = x.NewDoc(d.ID, &sk, true)
	}
	return x, docs, pairs
}

// TestCollapseCorpus checks Collapser.Collapse against the exact pairwise
// Jaccard of the shipped licences corpus, at threshold t = 0.8.
//
// Verified collapse (the default): every collapsed pair must be a listed
// pair with J >= t — the stored feature sets give the exact Jaccard, the
// same number as the ground truth — so this cannot fail by chance. Misses
// come from the table alone: a pair at similarity J is proposed with
// probability P(J) of the table's scheme, so the expected number of missed
// pairs (each pair collapsed as a list of two) is E = Σ_{J_i >= t}
// (1 − P(J_i)), variance V = Σ P(1 − P) under independent samples. OPH
// sketches of short texts have positively dependent slots and the pairs
// share documents, so the test allows E + 6·sqrt(V) rather than 4σ; the
// log states the measured miss rate.
//
// Unverified collapse (Bing's design): the log states the rates of pairs
// below t collapsed and of pairs at or above t missed; the test checks
// only the shape of the replies, since real sketches depart from the
// independent-sample S-curve (package lsh tests that curve exactly).
func TestCollapseCorpus(t *testing.T) {
	const thr = 0.8
	for _, unverified := range []bool{false, true} {
		t.Run(fmt.Sprintf("unverified=%v", unverified), func(t *testing.T) {
			x, docs, pairs := licences(t, store.NewMemory(), thr)
			// Half the corpus is stored before the collapser exists (read
			// from the store on first sight), half added after (put by Add).
			if _, err := x.Add(ctx, docs[:len(docs)/2]...); err != nil {
				t.Fatal(err)
			}
			c, err := x.NewCollapser(index.CollapseOptions{Unverified: unverified})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := x.Add(ctx, docs[len(docs)/2:]...); err != nil {
				t.Fatal(err)
			}
			p := c.Table().Params()
			collapsed, below, above, missed := 0, 0, 0, 0
			var expMiss, variance float64
			for _, pr := range pairs {
				res, err := c.Collapse(ctx, []string{pr.A, pr.B})
				if err != nil {
					t.Fatal(err)
				}
				ok := len(res.Collapsed) == 1
				if ok {
					collapsed++
					if res.Collapsed[0] != (index.Collapsed{ID: pr.B, Into: pr.A}) || !slices.Equal(res.Kept, []string{pr.A}) {
						t.Errorf("pair %s %s: %+v", pr.A, pr.B, res)
					}
					if pr.Jaccard < thr {
						below++
						if !unverified && pr.Jaccard < thr-1e-9 {
							t.Errorf("verified collapse of %s and %s at J = %v < %v", pr.A, pr.B, pr.Jaccard, thr)
						}
					}
				} else if !slices.Equal(res.Kept, []string{pr.A, pr.B}) || len(res.Unknown) != 0 {
					t.Errorf("pair %s %s: %+v", pr.A, pr.B, res)
				}
				if pr.Jaccard >= thr {
					above++
					q := p.Prob(pr.Jaccard)
					expMiss += 1 - q
					variance += q * (1 - q)
					if !ok {
						missed++
					}
				}
			}
			perDoc := float64(c.Table().Bytes()) / float64(c.Table().Len())
			t.Logf("%v (%d bytes of signature, %.1f bytes per document in memory with its id): %d pairs (J >= 0.5), %d collapsed, %d of them below t = %.1f (%.1f%%); miss rate %d of %d pairs at or above t (%.1f%%; independent-sample theory %.1f)",
				p, 2*p.B, perDoc, len(pairs), collapsed, below, thr, 100*float64(below)/float64(max(collapsed, 1)),
				missed, above, 100*float64(missed)/float64(above), expMiss)
			if !unverified && float64(missed) > expMiss+6*math.Sqrt(variance) {
				t.Errorf("%d pairs at or above t missed, expected at most %.1f + 6·%.1f", missed, expMiss, math.Sqrt(variance))
			}
			// The whole corpus as one ranked list, with a name listed twice
			// and one never stored.
			names := []string{"never-stored"}
			for _, d := range docs {
				names = append(names, d.Name)
			}
			names = append(names, docs[0].Name)
			jac := map[[2]string]float64{}
			for _, pr := range pairs {
				jac[[2]string{pr.A, pr.B}], jac[[2]string{pr.B, pr.A}] = pr.Jaccard, pr.Jaccard
			}
			res, err := c.Collapse(ctx, names)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Kept)+len(res.Collapsed) != len(names) || !slices.Equal(res.Unknown, []string{"never-stored"}) {
				t.Fatalf("whole corpus: %d kept + %d collapsed of %d, unknown %v", len(res.Kept), len(res.Collapsed), len(names), res.Unknown)
			}
			if last := res.Collapsed[len(res.Collapsed)-1]; last.ID != docs[0].Name {
				t.Errorf("the repeated name collapsed as %+v", last)
			}
			for _, cp := range res.Collapsed[:len(res.Collapsed)-1] {
				if j := jac[[2]string{cp.ID, cp.Into}]; !unverified && j < thr-1e-9 {
					t.Errorf("whole corpus: %s collapsed into %s at J = %v", cp.ID, cp.Into, j)
				}
			}
			t.Logf("whole corpus as one list: %d kept, %d collapsed", len(res.Kept), len(res.Collapsed))
			// Removed documents become unknown.
			if _, err := x.Remove(ctx, docs[1].Name); err != nil {
				t.Fatal(err)
			}
			res, err = c.Collapse(ctx, []string{docs[1].Name})
			if err != nil || !slices.Equal(res.Unknown, []string{docs[1].Name}) {
				t.Errorf("removed document: %+v, %v", res, err)
			}
		})
	}
}

// TestCollapserLoad fills a collapser from the store in one scan: it then
// reads nothing for ids it holds when unverified.
func TestCollapserLoad(t *testing.T) {
	cs := &countingStore{Store: store.NewMemory()}
	x, docs, _ := licences(t, cs, 0.8)
	if _, err := x.Add(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	x2, err := index.Open(ctx, cs, index.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := x2.NewCollapser(index.CollapseOptions{Unverified: true})
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Load(ctx)
	if err != nil || n != len(docs) {
		t.Fatalf("Load: %d, %v; want %d", n, err, len(docs))
	}
	before := cs.docLookups.Load()
	names := make([]string, 100)
	for i := range names {
		names[i] = docs[i].Name
	}
	if _, err := c.Collapse(ctx, names); err != nil {
		t.Fatal(err)
	}
	if got := cs.docLookups.Load() - before; got != 0 {
		t.Errorf("unverified collapse of loaded ids read the store %d times", got)
	}
}

// countingStore counts a real store's lookups (round trips for a network
// store).
type countingStore struct {
	store.Store
	postingLookups, docLookups atomic.Int64
}

func (s *countingStore) Postings(ctx0 context.Context, key uint64, dst []uint64) ([]uint64, error) {
	s.postingLookups.Add(1)
	return s.Store.Postings(ctx0, key, dst)
}

func (s *countingStore) LookupPostings(ctx0 context.Context, keys []uint64, fn func(int, []uint64) error) error {
	s.postingLookups.Add(1)
	return s.Store.LookupPostings(ctx0, keys, fn)
}

func (s *countingStore) Doc(ctx0 context.Context, id uint64, dst []byte) ([]byte, bool, error) {
	s.docLookups.Add(1)
	return s.Store.Doc(ctx0, id, dst)
}

func (s *countingStore) LookupDocs(ctx0 context.Context, ids []uint64, fn func(int, []byte, bool) error) error {
	s.docLookups.Add(1)
	return s.Store.LookupDocs(ctx0, ids, fn)
}

// TestQueryMany checks QueryMany against Query document by document on the
// licences corpus, and that a whole batch costs one posting lookup and one
// record lookup.
func TestQueryMany(t *testing.T) {
	cs := &countingStore{Store: store.NewMemory()}
	x, docs, _ := licences(t, cs, 0.8)
	if _, err := x.Add(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	p0, d0 := cs.postingLookups.Load(), cs.docLookups.Load()
	got := make([][]index.Match, len(docs))
	calls := 0
	err := x.QueryMany(ctx, docs, func(i int, id uint64) bool { return id == index.ID(docs[i].Name) }, func(i int, ms []index.Match) error {
		if i != calls {
			t.Fatalf("fn called for %d, want %d", i, calls)
		}
		calls++
		got[i] = slices.Clone(ms)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, d := cs.postingLookups.Load()-p0, cs.docLookups.Load()-d0; p != 1 || d != 1 {
		t.Errorf("QueryMany of %d documents: %d posting lookups, %d record lookups; want 1 and 1", len(docs), p, d)
	}
	total := 0
	for i, q := range docs {
		want, err := x.Query(ctx, nil, q, q.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[i], want) {
			t.Fatalf("%s: QueryMany %v, Query %v", q.Name, got[i], want)
		}
		total += len(want)
	}
	if total == 0 {
		t.Fatal("no matches at all")
	}
	// GetMany: one record lookup; a missing name is reported missing.
	d0 = cs.docLookups.Load()
	names := []string{docs[3].Name, "missing", docs[7].Name}
	var seen []bool
	err = x.GetMany(ctx, names, func(i int, d *index.Doc, ok bool) error {
		seen = append(seen, ok)
		if ok && d.Name != names[i] {
			t.Errorf("GetMany %d: %q", i, d.Name)
		}
		return nil
	})
	if err != nil || !slices.Equal(seen, []bool{true, false, true}) || cs.docLookups.Load()-d0 != 1 {
		t.Errorf("GetMany: %v %v, %d lookups", seen, err, cs.docLookups.Load()-d0)
	}
}

// scanDuring is a store whose ScanDocs reads every record first, then
// runs during (the index's writes landing while a long scan runs), then
// hands the records it read to fn: the scan of a snapshot taken before
// the writes.
type scanDuring struct {
	store.Store
	during func()
}

func (s *scanDuring) ScanDocs(ctx0 context.Context, fn func(id uint64, rec []byte) error) error {
	type rec struct {
		id  uint64
		rec []byte
	}
	var recs []rec
	err := s.Store.ScanDocs(ctx0, func(id uint64, r []byte) error {
		recs = append(recs, rec{id, slices.Clone(r)})
		return nil
	})
	if err != nil {
		return err
	}
	if s.during != nil {
		s.during()
	}
	for _, r := range recs {
		if err := fn(r.id, r.rec); err != nil {
			return err
		}
	}
	return nil
}

// TestCollapserLoadDuringWrites runs a Load while the index removes one
// document and replaces another: the table must end with what the writes
// made (no signature for the removed one, the new signature for the
// replaced one), not with the scan's older records.
func TestCollapserLoadDuringWrites(t *testing.T) {
	ss := &scanDuring{Store: store.NewMemory()}
	x, docs, _ := licences(t, ss, 0.8)
	if _, err := x.Add(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	c, err := x.NewCollapser(index.CollapseOptions{Unverified: true})
	if err != nil {
		t.Fatal(err)
	}
	gone, replaced, by := docs[0], docs[1], docs[2]
	ss.during = func() {
		if _, err := x.Remove(ctx, gone.Name); err != nil {
			t.Error(err)
		}
		d := *by
		d.Name = replaced.Name
		if _, err := x.Add(ctx, &d); err != nil {
			t.Error(err)
		}
	}
	n, err := c.Load(ctx)
	if err != nil || n != len(docs)-1 {
		t.Fatalf("Load: %d, %v; want %d", n, err, len(docs)-1)
	}
	if _, ok := c.Table().Get(nil, index.ID(gone.Name)); ok {
		t.Errorf("the removed %s is back in the table after Load", gone.Name)
	}
	got, ok := c.Table().Get(nil, index.ID(replaced.Name))
	want, err := c.Table().Signature(nil, by.Sketch.Values)
	if err != nil || !ok || !slices.Equal(got, want) {
		t.Errorf("the replaced %s has signature %v (in table: %v), want the new one %v (%v)", replaced.Name, got, ok, want, err)
	}
	// Outside a Load, writes no longer track anything.
	if _, err := x.Remove(ctx, docs[3].Name); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Table().Get(nil, index.ID(docs[3].Name)); ok {
		t.Errorf("the removed %s is still in the table", docs[3].Name)
	}
}
