package cluster

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

func TestUnionFindVerify(t *testing.T) {
	st := rng.New(3)
	u := NewUnionFind(0)
	for step := range 2000 {
		if u.Len() < 2 || st.Intn(4) == 0 {
			u.Add()
		} else {
			u.Union(int32(st.Intn(uint64(u.Len()))), int32(st.Intn(uint64(u.Len()))))
		}
		if err := u.verify(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
}

// randomGraph returns edges over n nodes with ids spread out, similarities
// in [0.5, 1).
func randomGraph(seed uint64, n, m int) []Edge {
	st := rng.New(seed)
	es := make([]Edge, m)
	for i := range es {
		es[i] = Edge{A: st.Intn(uint64(n)) * 1000, B: st.Intn(uint64(n)) * 1000, Similarity: 0.5 + float64(st.Intn(50))/100}
	}
	return es
}

// components is the brute-force oracle: depth-first search over an
// adjacency map of the accepted edges.
func components(es []Edge, threshold float64) [][]uint64 {
	adj := map[uint64][]uint64{}
	for _, e := range es {
		if e.A != e.B && e.Similarity >= threshold {
			adj[e.A] = append(adj[e.A], e.B)
			adj[e.B] = append(adj[e.B], e.A)
		}
	}
	seen := map[uint64]bool{}
	var out [][]uint64
	var ids []uint64
	for id := range adj {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if seen[id] {
			continue
		}
		var comp []uint64
		stack := []uint64{id}
		seen[id] = true
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			comp = append(comp, x)
			for _, y := range adj[x] {
				if !seen[y] {
					seen[y] = true
					stack = append(stack, y)
				}
			}
		}
		slices.Sort(comp)
		out = append(out, comp)
	}
	return out
}

func TestComponentsOracle(t *testing.T) {
	for seed := range uint64(30) {
		n := 5 + int(seed)*7
		es := randomGraph(seed, n, n*int(seed%4)/2+1)
		for _, th := range []float64{0, 0.8} {
			o := Options{Threshold: th, MaxSize: 5}
			b, _ := NewBuilder(o)
			for i, e := range es {
				b.AddEdge(e)
				if err := b.Result().verify(o); err != nil { // invariant after every mutation
					t.Fatalf("seed %d after edge %d: %v", seed, i, err)
				}
			}
			r := b.Result()
			var got [][]uint64
			for _, c := range r.Clusters {
				got = append(got, c.Members)
				if c.Kept != c.ID {
					t.Errorf("KeepFirst without Seq kept %d, want smallest %d", c.Kept, c.ID)
				}
			}
			want := components(es, th)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d threshold %v: got %v, want %v", seed, th, got, want)
			}
		}
	}
}

// TestDeterministic shuffles the input order, reverses pairs and adds from
// several goroutines: the JSONL output must be byte-identical.
func TestDeterministic(t *testing.T) {
	es := randomGraph(99, 300, 500)
	for _, o := range []Options{{Threshold: 0.6}, {Threshold: 0.6, Star: true, StarThreshold: 0.7, MaxSize: 4}, {Keep: KeepLongest, MaxSize: 3}} {
		var want []byte
		for trial := range uint64(8) {
			b, _ := NewBuilder(o)
			perm := slices.Clone(es)
			st := rng.New(trial)
			for i := len(perm) - 1; i > 0; i-- {
				j := st.Intn(uint64(i + 1))
				perm[i], perm[j] = perm[j], perm[i]
			}
			for i := range perm {
				if st.Intn(2) == 0 {
					perm[i].A, perm[i].B = perm[i].B, perm[i].A
				}
			}
			workers := 1 + int(trial%4)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < len(perm); i += workers {
						b.AddEdge(perm[i])
						if perm[i].A%7 == 0 { // the same document set in every trial
							b.AddDoc(Doc{ID: perm[i].A, Length: int64(perm[i].A % 13)})
						}
					}
				}()
			}
			wg.Wait()
			r := b.Result()
			if err := r.verify(o); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			r.WriteJSONL(&buf)
			if trial == 0 {
				want = buf.Bytes()
				continue
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("%+v: trial %d (%d workers) output differs", o, trial, workers)
			}
		}
	}
}

// TestChaining: a chain a–b–c–d–e of 0.9 edges with no edges between
// non-neighbours. Components merge all five; Star keeps every member within
// the threshold of its kept centre.
func TestChaining(t *testing.T) {
	es := []Edge{{1, 2, 0.9}, {2, 3, 0.9}, {3, 4, 0.9}, {4, 5, 0.9}, {1, 3, 0.85}}
	b, _ := NewBuilder(Options{Threshold: 0.8, MaxSize: 3})
	b.AddEdges(es)
	r := b.Result()
	if len(r.Clusters) != 1 || len(r.Clusters[0].Members) != 5 || !r.Clusters[0].Oversize || !slices.Equal(r.Oversize, []uint64{1}) {
		t.Fatalf("components: %+v", r)
	}
	// the spanning tree prefers the strong links: 1–3 (0.85) is not used
	if got := fmt.Sprint(r.Clusters[0].Edges); got != "[{1 2 0.9} {2 3 0.9} {3 4 0.9} {4 5 0.9}]" {
		t.Errorf("spanning edges %s", got)
	}
	o := Options{Threshold: 0.8, Star: true}
	s, _ := NewBuilder(o)
	s.AddEdges(es)
	r = s.Result()
	if err := r.verify(o); err != nil {
		t.Fatal(err)
	}
	// centre 1 admits 2 and 3; 4 becomes a centre and admits 5.
	if got := fmt.Sprint(r.Clusters); got != "[{1 1 [1 2 3] [{1 2 0.9} {1 3 0.85}] false false} {4 4 [4 5] [{4 5 0.9}] false false}]" {
		t.Errorf("star clusters %s", got)
	}
	if r.Duplicates() != 3 {
		t.Errorf("duplicates %d", r.Duplicates())
	}
}

func TestKeepPolicies(t *testing.T) {
	es := []Edge{{10, 20, 1}, {20, 30, 1}}
	docs := []Doc{
		{ID: 10, Seq: 5, Length: 100, Attrs: map[string]string{"date": "2021", "score": "9"}},
		{ID: 20, Seq: 1, Length: 300, Attrs: map[string]string{"date": "2019", "score": "10"}},
		{ID: 30, Seq: 2, Length: 300},
	}
	for _, c := range []struct {
		o    Options
		kept uint64
	}{
		{Options{}, 20},
		{Options{Keep: KeepLongest}, 20},
		{Options{Keep: KeepField, Field: "date"}, 20},
		{Options{Keep: KeepField, Field: "date", Descending: true}, 10},
		{Options{Keep: KeepField, Field: "score", Descending: true}, 20}, // numeric: 10 > 9
		{Options{Keep: KeepField, Field: "missing"}, 20},
		{Options{Keep: KeepNone}, 20}, // the representative, as KeepFirst
		{Options{Keep: KeepNone, Star: true}, 20},
	} {
		b, err := NewBuilder(c.o)
		if err != nil {
			t.Fatal(err)
		}
		b.AddEdges(es)
		for _, d := range docs {
			b.AddDoc(d)
		}
		if r := b.Result(); r.Clusters[0].Kept != c.kept {
			t.Errorf("%+v: kept %d, want %d", c.o, r.Clusters[0].Kept, c.kept)
		}
	}
	// A pinned document is kept whatever the policy.
	for _, o := range []Options{{}, {Keep: KeepLongest}, {Keep: KeepField, Field: "date"}, {Star: true}} {
		b, _ := NewBuilder(o)
		b.AddEdges(es)
		for _, d := range docs {
			if d.ID == 30 {
				d.Pinned = true
			}
			b.AddDoc(d)
		}
		r := b.Result()
		if r.Clusters[0].Kept != 30 {
			t.Errorf("%+v: kept %d, want the pinned 30", o, r.Clusters[0].Kept)
		}
	}
	if _, err := NewBuilder(Options{Keep: KeepField}); err == nil {
		t.Error("KeepField without Field accepted")
	}
	if _, err := NewBuilder(Options{Threshold: math.NaN()}); err == nil {
		t.Error("NaN threshold accepted")
	}
}

func TestRejected(t *testing.T) {
	b, _ := NewBuilder(Options{Threshold: 0.8})
	b.AddEdges([]Edge{{1, 1, 1}, {1, 2, 0.5}, {1, 2, math.NaN()}, {2, 3, 0.9}, {3, 2, 0.95}})
	r := b.Result()
	if r.Rejected != 3 || r.Edges != 1 || fmt.Sprint(r.Clusters[0].Edges) != "[{2 3 0.95}]" {
		t.Errorf("rejected %d edges %d %v", r.Rejected, r.Edges, r.Clusters)
	}
}

func BenchmarkCluster(b *testing.B) {
	for _, star := range []bool{false, true} {
		b.Run(fmt.Sprintf("star=%v", star), func(b *testing.B) {
			es := randomGraph(1, 500_000, 1_000_000)
			b.ReportAllocs()
			for b.Loop() {
				bl, _ := NewBuilder(Options{Threshold: 0.6, Star: star})
				bl.AddEdges(es)
				bl.Result()
			}
			b.ReportMetric(float64(len(es))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}
