package index

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

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

func sketchOf(t testing.TB, smp sample.Sampler, set []uint64) sketch.Sketch {
	fs := make([]feature.Feature, len(set))
	for i, id := range set {
		fs[i] = feature.Feature{ID: id, Weight: 1}
	}
	return sketch.Sketch{Header: smp.Header(), Values: smp.Sketch(nil, fs), Size: float64(len(set))}
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

// The index must return exactly the documents that share a key with the
// query and pass verification: checked against a linear scan oracle.
func TestQueryMatchesLinearScan(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open()
			defer st.Close()
			smp, err := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 128, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			x, err := Open(st, Config{Header: smp.Header(), LSH: lsh.Banding(4, 32), Threshold: 0.7})
			if err != nil {
				t.Fatal(err)
			}
			names, sets := corpus(30, []float64{0.95, 0.8, 0.6, 0.3}, 1)
			docs := make([]*Doc, len(names))
			for i := range names {
				docs[i] = &Doc{Name: names[i], Sketch: sketchOf(t, smp, sets[i])}
				if i%2 == 0 {
					docs[i].Features = sets[i]
				}
			}
			if err := x.Add(docs...); err != nil {
				t.Fatal(err)
			}
			for i, q := range docs {
				got, err := x.Query(nil, &q.Sketch, q.Features, q.Name)
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
						sim, exact = ExactJaccard(q.Features, d.Features), true
					}
					if shared && Accept(0.7, DefaultSlack, 128, sim, exact) {
						want = append(want, d.Name)
					}
				}
				var gotNames []string
				for _, m := range got {
					gotNames = append(gotNames, m.Name)
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

// Recall at J = 0.95 over many independent pairs must match the scheme's
// exact P(J) within 4 binomial standard errors.
func TestRecallFollowsSCurve(t *testing.T) {
	smp, _ := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 128, Seed: 11})
	p := lsh.Banding(8, 16)
	x, err := Open(store.NewMemory(), Config{Header: smp.Header(), LSH: p, Threshold: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	names, sets := corpus(400, []float64{0.6}, 2)
	var docs []*Doc
	for i := range names {
		docs = append(docs, &Doc{Name: names[i], Sketch: sketchOf(t, smp, sets[i])})
	}
	if err := x.Add(docs...); err != nil {
		t.Fatal(err)
	}
	found, n := 0, 0
	var jsum float64
	for i := 0; i < len(docs); i += 2 {
		jsum += ExactJaccard(sets[i], sets[i+1])
		got, _ := x.Query(nil, &docs[i].Sketch, nil, docs[i].Name)
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
	smp, _ := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 64, Seed: 3})
	st := store.NewMemory()
	x, err := Open(st, Config{Header: smp.Header(), LSH: lsh.Banding(4, 16)})
	if err != nil {
		t.Fatal(err)
	}
	_, sets := corpus(2, []float64{0.95}, 5)
	a := &Doc{Name: "a", Sketch: sketchOf(t, smp, sets[0])}
	b := &Doc{Name: "b", Sketch: sketchOf(t, smp, sets[1])}
	if err := x.Add(a, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := x.Query(nil, &a.Sketch, nil, "a"); len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("before remove: %v", got)
	}
	// Replace b with an unrelated document: its old postings must go.
	b2 := &Doc{Name: "b", Sketch: sketchOf(t, smp, sets[2])}
	if err := x.Add(b2); err != nil {
		t.Fatal(err)
	}
	if got, _ := x.Query(nil, &a.Sketch, nil, "a"); len(got) != 0 {
		t.Fatalf("after replace: %v", got)
	}
	if n, err := x.Remove("b", "missing"); err != nil || n != 1 {
		t.Fatalf("Remove = %d, %v", n, err)
	}
	if _, ok, _ := x.Get("b"); ok {
		t.Fatal("b still there")
	}
	cands, _ := x.Candidates(nil, &b2.Sketch)
	if len(cands) != 0 {
		t.Fatalf("postings of b left behind: %v", cands)
	}
}

func TestReopenChecksConfig(t *testing.T) {
	dir := t.TempDir()
	smp, _ := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 64, Seed: 3})
	st, err := store.OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := Open(st, Config{Header: smp.Header(), LSH: lsh.Banding(4, 16)})
	if err != nil {
		t.Fatal(err)
	}
	_, sets := corpus(1, nil, 9)
	d := &Doc{Name: "only", Sketch: sketchOf(t, smp, sets[0]), Features: sets[0]}
	if err := x.Add(d); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = store.OpenPebble(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := Open(st, Config{Header: smp.Header(), LSH: lsh.Banding(8, 8)}); !errors.Is(err, ErrConfig) {
		t.Fatalf("other LSH params: err = %v, want ErrConfig", err)
	}
	x, err = Open(st, Config{Header: smp.Header(), LSH: lsh.Banding(4, 16)})
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := x.Get("only")
	if err != nil || !ok || !slices.Equal(got.Features, sets[0]) || !slices.Equal(got.Sketch.Values, d.Sketch.Values) {
		t.Fatalf("Get after reopen: %v %v", ok, err)
	}
}

func TestRecordCorruption(t *testing.T) {
	smp, _ := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 16, Seed: 3})
	_, sets := corpus(1, nil, 4)
	d := &Doc{Name: "x", Sketch: sketchOf(t, smp, sets[0]), Features: sets[0]}
	rec := AppendDoc(nil, d)
	for n := 0; n < len(rec); n++ {
		if _, err := DecodeDoc(rec[:n]); err == nil {
			t.Fatalf("truncated record of %d/%d bytes decoded", n, len(rec))
		}
	}
	got, err := DecodeDoc(rec)
	if err != nil || got.Name != "x" || !slices.Equal(got.Features, d.Features) {
		t.Fatalf("round trip: %v", err)
	}
}

func TestExactJaccard(t *testing.T) {
	cases := []struct {
		a, b []uint64
		want float64
	}{
		{nil, nil, 1},
		{[]uint64{1}, nil, 0},
		{[]uint64{1, 2, 3}, []uint64{2, 3, 4}, 0.5},
		{[]uint64{1, 1, 2}, []uint64{1, 2, 2}, 1},
	}
	for _, c := range cases {
		if got := ExactJaccard(c.a, c.b); got != c.want {
			t.Errorf("ExactJaccard(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
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
