package index

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/store"
)

// identical returns the name Identical finds for fp ("" for none).
func identical(t *testing.T, x *Index, fp identity.Fingerprint, skip func(uint64) bool) string {
	t.Helper()
	got := ""
	if _, err := x.Identical(bg, []identity.Fingerprint{fp}, skip, func(_ int, _ uint64, name string) error { got = name; return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// The fingerprint filter: found through a new Index whether or not it was
// flushed (rebuilt from the records when not), grown when it overflows,
// and never trusted over the records: a replaced body is not found.
func TestFingerprintFilter(t *testing.T) {
	st := store.NewMemory()
	x := mustOpen(t, st, minhashConfig(16, 1, lsh.Banding(2, 8), 0))
	_, sets := corpus(300, nil, 12)
	var docs []*Doc
	for i, s := range sets {
		docs = append(docs, mkDoc(t, x, fmt.Sprintf("d%d", i), s, false))
	}
	mustAdd(t, x, docs[:10]...)
	// Not flushed: a new Index rebuilds the filter from the records.
	y := mustOpen(t, st, Config{})
	if got := identical(t, y, docs[3].Fingerprint, nil); got != "d3" {
		t.Fatalf("unflushed: %q", got)
	}
	if _, ok, _ := st.Meta(bg, dirtyMeta, nil); !ok {
		t.Fatal("no marker after unflushed adds")
	}
	if err := x.Flush(bg); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.Meta(bg, dirtyMeta, nil); ok {
		t.Fatal("marker left after Flush")
	}
	raw, ok := recordedFilter(t, st)
	var f filter
	if !ok || f.decode(raw) != nil || f.capacity != minFilter {
		t.Fatalf("recorded filter: %v, capacity %d", ok, f.capacity)
	}
	// Overflow: more fingerprints than the filter was made for are added
	// (the capacity is shrunk here to see it); Flush rebuilds it larger.
	x.fps.mu.Lock()
	x.fps.capacity = 16
	x.fps.mu.Unlock()
	mustAdd(t, x, docs[10:]...)
	if err := x.Flush(bg); err != nil {
		t.Fatal(err)
	}
	raw, _ = recordedFilter(t, st)
	if err := f.decode(raw); err != nil || f.capacity < 4*300 || f.n != 300 {
		t.Fatalf("after overflow: capacity %d, n %d, %v", f.capacity, f.n, err)
	}
	z := mustOpen(t, st, Config{})
	for _, i := range []int{0, 150, 299} {
		if got := identical(t, z, docs[i].Fingerprint, nil); got != docs[i].Name {
			t.Fatalf("after overflow, d%d: %q", i, got)
		}
	}
	// Skipped ids are not answers; a replaced body is not found.
	if got := identical(t, z, docs[5].Fingerprint, func(id uint64) bool { return id == ID("d5") }); got != "" {
		t.Fatalf("skipped: %q", got)
	}
	mustAdd(t, z, mkDoc(t, z, "d5", sets[6], false))
	if got := identical(t, z, docs[5].Fingerprint, nil); got != "" {
		t.Fatalf("replaced body found as %q", got)
	}
	// Two names with one body: the smallest id answers.
	mustAdd(t, z, mkDoc(t, z, "twin", sets[7], false))
	want := "twin"
	if ID("d7") < ID("twin") {
		want = "d7"
	}
	if got := identical(t, z, docs[7].Fingerprint, nil); got != want {
		t.Fatalf("twins: %q, want %q", got, want)
	}
	st2 := store.NewMemory()
	e := mustOpen(t, st2, Config{})
	if got := identical(t, e, identity.Fingerprint{Hi: 1}, nil); got != "" {
		t.Fatalf("empty index: %q", got)
	}
	checkClean(t, z)
}

// TestThreeRuns is the reproduction at the index level: x with
// body T1, then x replaced by T2, then z with T1: T1 must not be found.
func TestThreeRuns(t *testing.T) {
	st := store.NewMemory()
	_, sets := corpus(2, nil, 3)
	x := mustOpen(t, st, Config{})
	t1 := mkDoc(t, x, "x", sets[0], true)
	mustAdd(t, x, t1)
	x.Flush(bg)
	x = mustOpen(t, st, Config{})
	if got := identical(t, x, t1.Fingerprint, func(id uint64) bool { return id == ID("x") }); got != "" {
		t.Fatal("own id not skipped")
	}
	mustAdd(t, x, mkDoc(t, x, "x", sets[1], true))
	x.Flush(bg)
	x = mustOpen(t, st, Config{})
	z := mkDoc(t, x, "z", sets[0], true)
	if got := identical(t, x, z.Fingerprint, nil); got != "" {
		t.Fatalf("z is identical to %q, which no longer holds T1", got)
	}
	if ms, _ := x.Query(bg, nil, z, ""); len(ms) != 0 {
		t.Fatalf("z matches %v", ms)
	}
}

// Join finds exactly the pairs that share a key (runs within MaxRun), with
// the number of shared keys, for any number of workers; VerifyPairs agrees
// with Verify.
func TestJoinMatchesKeys(t *testing.T) {
	x := mustOpen(t, store.NewMemory(), minhashConfig(32, 2, lsh.Banding(4, 8), 0.5))
	_, sets := corpus(150, []float64{0.9, 0.7, 0.4}, 41)
	docs := make([]*Doc, len(sets))
	for i, s := range sets {
		docs[i] = mkDoc(t, x, fmt.Sprint(i), s, i%3 != 0)
	}
	docs[5].Sketch.Values = []uint64{} // a document without features joins nothing
	want := map[[2]uint32]int32{}
	for i := range docs {
		ki, _ := x.Keys(nil, &docs[i].Sketch)
		for j := i + 1; j < len(docs); j++ {
			kj, _ := x.Keys(nil, &docs[j].Sketch)
			n := int32(0)
			for c := range ki {
				if c < len(kj) && ki[c] == kj[c] {
					n++
				}
			}
			if n > 0 {
				want[[2]uint32{uint32(i), uint32(j)}] = n
			}
		}
	}
	values := func(dst []uint64, i int) []uint64 { return append(dst, docs[i].Sketch.Values...) }
	var first []JoinPair
	for _, w := range []int{1, 3} {
		var calls int64
		pairs, err := x.Join(bg, len(docs), values, BatchOptions{Workers: w, Progress: func(done, total int64) { calls = done }})
		if err != nil {
			t.Fatal(err)
		}
		if calls != int64(x.Scheme().NumKeys()) {
			t.Errorf("progress reached %d of %d passes", calls, x.Scheme().NumKeys())
		}
		if !slices.IsSortedFunc(pairs, func(a, b JoinPair) int { return cmp.Compare(uint64(a.A)<<32|uint64(a.B), uint64(b.A)<<32|uint64(b.B)) }) {
			t.Fatal("pairs not sorted")
		}
		got := map[[2]uint32]int32{}
		for _, p := range pairs {
			got[[2]uint32{p.A, p.B}] = p.Keys
		}
		if len(got) != len(want) {
			t.Fatalf("%d workers: %d pairs, want %d", w, len(got), len(want))
		}
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("pair %v: %d keys, want %d", k, got[k], n)
			}
		}
		if first == nil {
			first = pairs
		} else if !slices.Equal(first, pairs) {
			t.Fatal("results differ between worker counts")
		}
	}
	// Asking for the values in another order changes nothing; Visit must
	// be a permutation.
	visit := make([]uint32, len(docs))
	for k := range visit {
		visit[k] = uint32(len(docs) - 1 - k)
	}
	r := rng.New(3)
	for k := len(visit) - 1; k > 0; k-- { // a Fisher–Yates shuffle
		j := r.Intn(uint64(k + 1))
		visit[k], visit[j] = visit[j], visit[k]
	}
	for _, w := range []int{1, 3} {
		pairs, err := x.Join(bg, len(docs), values, BatchOptions{Workers: w, Visit: visit})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first, pairs) {
			t.Fatalf("%d workers: results differ with Visit", w)
		}
	}
	for _, bad := range [][]uint32{{}, visit[1:], append(slices.Clone(visit[1:]), visit[1]), append(slices.Clone(visit[1:]), uint32(len(docs)))} {
		if _, err := x.Join(bg, len(docs), values, BatchOptions{Visit: bad}); err == nil {
			t.Errorf("Visit %v accepted", bad)
		}
	}
	ok := make([]bool, len(first))
	err := x.VerifyPairs(bg, first, func(i uint32) *Doc { return docs[i] }, BatchOptions{Workers: 2}, func(k int, c Comparison, match bool) {
		ok[k] = match
		p := first[k]
		want, wantOK, _ := x.Verify(docs[p.A], docs[p.B])
		if c.Estimate != want.Estimate || c.Exact != want.Exact || match != wantOK || c.Keys != int(p.Keys) {
			t.Errorf("pair %v: VerifyPairs %+v %v, Verify %+v %v", p, c, match, want, wantOK)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// A run longer than MaxRun: each member pairs with at most MaxRun
	// before it.
	same := make([]*Doc, 10)
	for i := range same {
		same[i] = docs[0]
	}
	pairs, _ := x.Join(bg, len(same), func(dst []uint64, i int) []uint64 { return append(dst, same[i].Sketch.Values...) }, BatchOptions{MaxRun: 3})
	if len(pairs) != 3+3*6+2+1 {
		t.Fatalf("MaxRun 3 over a run of 10: %d pairs", len(pairs))
	}
}
