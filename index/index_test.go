package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

var bg = context.Background()

// corpus makes n base sets of size 200 and, for each, variants at the given
// Jaccard similarities (by replacing features), returning names, sorted
// feature sets.
func corpus(n int, sims []float64, seed uint64) (names []string, sets [][]uint64) {
	s := rng.New(seed)
	for i := 0; i < n; i++ {
		base := make([]uint64, 200)
		for j := range base {
			base[j] = s.Uint64()
		}
		names = append(names, fmt.Sprintf("doc%d", i))
		sets = append(sets, sorted(base))
		for v, j := range sims {
			// Replacing r of 200 features gives J = (200-r)/(200+r).
			r := int(math.Round(200 * (1 - j) / (1 + j)))
			variant := slices.Clone(base)
			for t := 0; t < r; t++ {
				variant[t] = s.Uint64()
			}
			names = append(names, fmt.Sprintf("doc%d.v%d", i, v))
			sets = append(sets, sorted(variant))
		}
	}
	return names, sets
}

func sorted(a []uint64) []uint64 { a = slices.Clone(a); slices.Sort(a); return a }

// mkDoc makes the document name of set, sketched with x's sampler; its
// fingerprint is a hash of the set (identical sets, identical
// fingerprints), and it keeps its features when features is true.
func mkDoc(t testing.TB, x *Index, name string, set []uint64, features bool) *Doc {
	t.Helper()
	smp, err := sample.New(x.Config().Sketch)
	if err != nil {
		t.Fatal(err)
	}
	fs := make([]feature.Feature, len(set))
	fp := uint64(len(set))
	for i, id := range set {
		fs[i] = feature.Feature{ID: id, Weight: 1}
		fp = rng.Hash(fp, id)
	}
	d := &Doc{Name: name, Fingerprint: identity.Fingerprint{Hi: fp, Lo: rng.Mix64(fp), Len: uint64(len(set))}, HasFingerprint: true,
		Sketch: sketch.Sketch{Header: smp.Header(), Values: smp.Sketch(nil, fs), Size: float64(len(set))}}
	if features {
		d.Features = slices.Clone(set)
	}
	return d
}

func stores(t *testing.T) map[string]func() store.Store {
	return map[string]func() store.Store{
		"memory": func() store.Store { return store.NewMemory() },
		"pebble": func() store.Store {
			st, err := store.OpenPebble(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	}
}

func minhashConfig(k int, seed uint64, p lsh.Params, threshold float64) Config {
	return Config{Sketch: sample.Config{Algorithm: sketch.MinHash, K: k, Seed: seed}, LSH: p, Threshold: threshold}
}

func mustOpen(t testing.TB, st store.Store, c Config) *Index {
	t.Helper()
	x, err := Open(bg, st, c)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func mustAdd(t testing.TB, x *Index, docs ...*Doc) AddResult {
	t.Helper()
	r, err := x.Add(bg, docs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The index must return exactly the documents that share a key with the
// query and pass verification: checked against a linear scan oracle.
func TestQueryMatchesLinearScan(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open()
			defer st.Close()
			x := mustOpen(t, st, minhashConfig(128, 7, lsh.Banding(4, 32), 0.7))
			names, sets := corpus(30, []float64{0.95, 0.8, 0.6, 0.3}, 1)
			docs := make([]*Doc, len(names))
			for i := range names {
				docs[i] = mkDoc(t, x, names[i], sets[i], i%2 == 0)
			}
			if r := mustAdd(t, x, docs...); r.Added != len(docs) {
				t.Fatalf("Add: %+v", r)
			}
			for i, q := range docs {
				got, err := x.Query(bg, nil, q, q.Name)
				if err != nil {
					t.Fatal(err)
				}
				qk, _ := x.Keys(nil, &q.Sketch)
				var want []string
				for j, d := range docs {
					if j == i {
						continue
					}
					dk, _ := x.Keys(nil, &d.Sketch)
					shared := false
					for _, k := range qk {
						shared = shared || slices.Contains(dk, k)
					}
					est, _ := sketch.Jaccard(&q.Sketch, &d.Sketch)
					sim, exact := est.J, false
					if q.Features != nil && d.Features != nil {
						sim, exact = sketch.ExactJaccard(q.Features, d.Features), true
					}
					if shared && Accept(0.7, DefaultSlack, 128, sim, exact) {
						want = append(want, d.Name)
					}
				}
				var gotNames []string
				for _, m := range got {
					gotNames = append(gotNames, m.Name)
					if m.Keys < 1 || m.ID != ID(m.Name) {
						t.Fatalf("match %+v", m)
					}
				}
				slices.Sort(gotNames)
				slices.Sort(want)
				if !slices.Equal(gotNames, want) {
					t.Fatalf("query %s: got %v, want %v", q.Name, gotNames, want)
				}
			}
		})
	}
}

// Recall at J = 0.6 over many independent pairs must match the scheme's
// exact P(J) within 4 binomial standard errors: with n pairs the count of
// found ones is Binomial(n, P(J)), sd sqrt(P(1−P)/n), so a 4 sd band fails
// by chance with probability 6e-5.
func TestRecallFollowsSCurve(t *testing.T) {
	p := lsh.Banding(8, 16)
	x := mustOpen(t, store.NewMemory(), minhashConfig(128, 11, p, 0.01))
	names, sets := corpus(400, []float64{0.6}, 2)
	var docs []*Doc
	for i := range names {
		docs = append(docs, mkDoc(t, x, names[i], sets[i], false))
	}
	mustAdd(t, x, docs...)
	found, n := 0, 0
	var jsum float64
	for i := 0; i < len(docs); i += 2 {
		jsum += sketch.ExactJaccard(sets[i], sets[i+1])
		got, _ := x.Query(bg, nil, docs[i], docs[i].Name)
		for _, m := range got {
			if m.Name == docs[i+1].Name {
				found++
			}
		}
		n++
	}
	pj := p.Prob(jsum / float64(n))
	se := math.Sqrt(pj * (1 - pj) / float64(n))
	if got := float64(found) / float64(n); math.Abs(got-pj) > 4*se {
		t.Errorf("recall %v at J=%.3f, scheme predicts %v ± %v (4 SE)", got, jsum/float64(n), pj, 4*se)
	}
}

func TestRemoveAndReplace(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, minhashConfig(64, 3, lsh.Banding(4, 16), 0))
	_, sets := corpus(2, []float64{0.95}, 5)
	a := mkDoc(t, x, "a", sets[0], false)
	b := mkDoc(t, x, "b", sets[1], false)
	mustAdd(t, x, a, b)
	if got, _ := x.Query(bg, nil, a, "a"); len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("before remove: %v", got)
	}
	// Replace b with an unrelated document: its old postings must go.
	b2 := mkDoc(t, x, "b", sets[2], false)
	if r := mustAdd(t, x, b2); r != (AddResult{Replaced: 1}) {
		t.Fatalf("replace: %+v", r)
	}
	if got, _ := x.Query(bg, nil, a, "a"); len(got) != 0 {
		t.Fatalf("after replace: %v", got)
	}
	if n, err := x.Remove(bg, "b", "missing", "b"); err != nil || n != 1 {
		t.Fatalf("Remove = %d, %v", n, err)
	}
	if _, ok, _ := x.Get(bg, "b"); ok {
		t.Fatal("b still there")
	}
	cands, _ := x.Candidates(bg, nil, &b2.Sketch)
	if len(cands) != 0 {
		t.Fatalf("postings of b left behind: %v", cands)
	}
	checkClean(t, x)
}

// Duplicate names within one Add: the last wins, the counts are exact, and
// nothing of the earlier ones is left in the store.
func TestAddDuplicateNames(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, minhashConfig(64, 3, lsh.Banding(4, 16), 0))
	_, sets := corpus(4, nil, 8)
	r := mustAdd(t, x, mkDoc(t, x, "x", sets[0], true), mkDoc(t, x, "y", sets[1], false),
		mkDoc(t, x, "x", sets[2], false), mkDoc(t, x, "x", sets[3], true))
	if r != (AddResult{Added: 2, Duplicates: 2}) {
		t.Fatalf("Add: %+v, want 2 added and 2 duplicates", r)
	}
	got, ok, err := x.Get(bg, "x")
	if err != nil || !ok || !slices.Equal(got.Features, sets[3]) {
		t.Fatalf("x is not the last of the batch: %v %v", ok, err)
	}
	for _, s := range sets[:3] {
		if s := mkDoc(t, x, "q", s, false); true {
			cands, _ := x.Candidates(bg, nil, &s.Sketch)
			for _, c := range cands {
				if c.ID == ID("x") {
					t.Fatalf("stale posting of an earlier x: %+v", c)
				}
			}
		}
	}
	n := 0
	if _, err := x.Identical(bg, []identity.Fingerprint{mkDoc(t, x, "q", sets[0], false).Fingerprint}, nil, func(int, uint64, string) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("fingerprint of an earlier x found: %d %v", n, err)
	}
	checkClean(t, x)
	if _, err := x.Add(bg, mkDoc(t, x, "z", sets[0], false), &Doc{Name: "w", Sketch: sketch.Sketch{Header: sketch.Header{Algorithm: sketch.OPH, Version: 1, K: 64, Bits: 64}}}); err == nil {
		t.Fatal("Add accepted a sketch of another header")
	}
	if _, ok, _ := x.Get(bg, "z"); ok {
		t.Fatal("a failed Add wrote part of its batch")
	}
}

// checkClean fails unless Check finds nothing wrong.
func checkClean(t testing.TB, x *Index) {
	t.Helper()
	r, err := x.Check(bg, false)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("Check: %+v", r)
	}
}

func TestRecordRoundTripAndCorruption(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(16, 3, lsh.Banding(2, 8), 0))
	_, sets := corpus(1, nil, 4)
	w := []feature.Feature{{ID: 3, Weight: 0.5}, {ID: 9, Weight: 2}}
	for _, d := range []*Doc{
		mkDoc(t, x, "x", sets[0], true),
		mkDoc(t, x, "no features", sets[0], false),
		{Name: "weighted", Sketch: mkDoc(t, x, "", sets[0], false).Sketch, Weighted: w},
		{Name: "empty", Sketch: sketch.Sketch{Header: x.Header(), Values: []uint64{}}, Features: []uint64{}, Weighted: []feature.Feature{}},
	} {
		rec, err := AppendDoc(nil, d)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(rec); n++ {
			if _, err := DecodeDoc(rec[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: truncated record of %d/%d bytes: %v", d.Name, n, len(rec), err)
			}
		}
		got, err := DecodeDoc(rec)
		if err != nil || got.Name != d.Name || got.HasFingerprint != d.HasFingerprint || got.Fingerprint != d.Fingerprint ||
			!slices.Equal(got.Features, d.Features) || (got.Features == nil) != (d.Features == nil) ||
			!slices.Equal(got.Weighted, d.Weighted) || (got.Weighted == nil) != (d.Weighted == nil) ||
			!slices.Equal(got.Sketch.Values, d.Sketch.Values) || got.Sketch.Size != d.Sketch.Size {
			t.Fatalf("%s: round trip: %+v, %v", d.Name, got, err)
		}
	}
	if _, err := AppendDoc(nil, &Doc{Name: "bad"}); err == nil {
		t.Fatal("AppendDoc encoded an invalid sketch")
	}
}

// appendV1 is the record encoding of the previous release, kept here to
// check that such records still decode.
func appendV1(dst []byte, d *Doc) []byte {
	dst = append(dst, 1)
	dst = appendUvarint(dst, uint64(len(d.Name)))
	dst = append(dst, d.Name...)
	enc, _ := d.Sketch.AppendBinary(nil)
	dst = append(dst, byte(len(enc)), byte(len(enc)>>8), byte(len(enc)>>16), byte(len(enc)>>24))
	dst = append(dst, enc...)
	if d.Features == nil {
		return appendUvarint(dst, 0)
	}
	dst = appendUvarint(dst, uint64(len(d.Features))+1)
	prev := uint64(0)
	for _, f := range d.Features {
		dst = appendUvarint(dst, f-prev)
		prev = f
	}
	return dst
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func TestRecordV1(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(16, 3, lsh.Banding(2, 8), 0))
	_, sets := corpus(1, nil, 4)
	d := mkDoc(t, x, "old", sets[0], true)
	d.HasFingerprint, d.Fingerprint = false, identity.Fingerprint{}
	rec := appendV1(nil, d)
	got, err := DecodeDoc(rec)
	if err != nil || got.Name != "old" || got.HasFingerprint || !slices.Equal(got.Features, d.Features) || !slices.Equal(got.Sketch.Values, d.Sketch.Values) {
		t.Fatalf("v1 record: %+v %v", got, err)
	}
	for n := 0; n < len(rec); n++ {
		if _, err := DecodeDoc(rec[:n]); err == nil {
			t.Fatalf("truncated v1 record of %d/%d bytes decoded", n, len(rec))
		}
	}
}

// FuzzDecodeDoc: no input panics; what decodes re-encodes to a record that
// decodes to the same document, and verifies in place as it does decoded.
func FuzzDecodeDoc(f *testing.F) {
	x := mustOpen(f, store.NewMemory(), minhashConfig(8, 3, lsh.Banding(2, 4), 0))
	_, sets := corpus(1, nil, 4)
	d := mkDoc(f, x, "seed", sets[0][:20], true)
	rec, _ := AppendDoc(nil, d)
	f.Add(rec)
	f.Add(appendV1(nil, d))
	f.Add(appendV2(nil, d))
	q := *d
	d.Weighted, d.Features = []feature.Feature{{ID: 1, Weight: 2}}, nil
	rec, _ = AppendDoc(nil, d)
	f.Add(rec)
	f.Fuzz(func(t *testing.T, rec []byte) {
		// The query path's in-place verification fails or succeeds, and
		// agrees with Verify on what decodes.
		var s stored
		if s.load(rec) == nil {
			got, gok, gerr := x.verifyStored(&q, &s)
			if d, err := DecodeDoc(rec); err == nil {
				want, wok, werr := x.Verify(&q, d)
				if (gerr == nil) != (werr == nil) || (gerr == nil && (got != want || gok != wok)) {
					t.Fatalf("verifyStored %+v %v %v, Verify %+v %v %v", got, gok, gerr, want, wok, werr)
				}
			}
		}
		d, err := DecodeDoc(rec)
		if err != nil {
			return
		}
		again, err := AppendDoc(nil, d)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", d, err)
		}
		d2, err := DecodeDoc(again)
		if err != nil || d2.Name != d.Name || d2.Fingerprint != d.Fingerprint || !slices.Equal(d2.Features, d.Features) || len(d2.Weighted) != len(d.Weighted) {
			t.Fatalf("re-encoding changed the document: %+v vs %+v (%v)", d2, d, err)
		}
	})
}

func TestAccept(t *testing.T) {
	// sigma at t = 0.8, k = 128 is 0.0354; 1.645 sigma = 0.0582.
	cases := []struct {
		sim   float64
		exact bool
		slack float64
		want  bool
	}{
		{0.80, true, DefaultSlack, true},
		{0.79, true, DefaultSlack, false}, // exact similarity is never widened
		{0.75, false, DefaultSlack, true},
		{0.74, false, DefaultSlack, false},
		{0.79, false, -1, false},
		{0.80, false, -1, true},
	}
	for _, c := range cases {
		if got := Accept(0.8, c.slack, 128, c.sim, c.exact); got != c.want {
			t.Errorf("Accept(0.8, %v, 128, %v, %v) = %v, want %v", c.slack, c.sim, c.exact, got, c.want)
		}
	}
}

// Weighted documents verify by the exact weighted Jaccard through the same
// path as sets.
func TestWeightedVerification(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), Config{Sketch: sample.Config{Algorithm: sketch.CWS, K: 64, Features: feature.Options{Weighting: feature.WeightCount}}, LSH: lsh.Banding(2, 32), Threshold: 0.5})
	s, err := x.NewSketcher()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta ", 10)
	var sa, sb sample.Sketched
	s.Sketch(&sa, []byte(text), false)
	s.Sketch(&sb, []byte(text+"iota kappa lambda"), false)
	a, b := x.NewDoc("a", &sa, true), x.NewDoc("b", &sb, true)
	if a.Weighted == nil || a.Features != nil || !slices.IsSortedFunc(a.Weighted, func(p, q feature.Feature) int { return cmp.Compare(p.ID, q.ID) }) {
		t.Fatalf("NewDoc of a weighted sampler: %+v", a)
	}
	mustAdd(t, x, a)
	ms, err := x.Query(bg, nil, b, "")
	if err != nil || len(ms) != 1 || ms[0].Exact < 0 || ms[0].Exact >= 1 {
		t.Fatalf("weighted query: %+v %v", ms, err)
	}
	c, _, _ := x.Verify(a, b)
	if c.Exact != ms[0].Exact {
		t.Fatalf("Verify %v and Query %v disagree", c.Exact, ms[0].Exact)
	}
	checkClean(t, x)
}
