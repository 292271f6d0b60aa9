package index_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

var ctx = context.Background()

// text returns n distinct words starting at word from.
func text(from, n int) string {
	var w []string
	for i := from; i < from+n; i++ {
		w = append(w, fmt.Sprintf("w%d", i))
	}
	return strings.Join(w, " ")
}

// doc sketches body with s and makes it the index document name, with its
// features for exact verification.
func doc(x *index.Index, s *sample.Sketcher, name, body string) *index.Doc {
	var sk sample.Sketched
	s.Sketch(&sk, []byte(body), false)
	return x.NewDoc(name, &sk, true)
}

func Example() {
	x, err := index.Open(ctx, store.NewMemory(), index.Config{Threshold: 0.8})
	if err != nil {
		panic(err)
	}
	s, _ := x.NewSketcher() // one per goroutine
	res, _ := x.Add(ctx, doc(x, s, "a", text(0, 1000)), doc(x, s, "far", text(5000, 1000)))
	fmt.Printf("added %d\n", res.Added)
	q := doc(x, s, "query", text(10, 990)) // 986 of a's 996 shingles
	matches, _ := x.Query(ctx, nil, q, "")
	for _, m := range matches {
		fmt.Printf("%s exact=%.2f keys>0=%v\n", m.Name, m.Exact, m.Keys > 0)
	}
	// Output:
	// added 2
	// a exact=0.99 keys>0=true
}

func ExampleOpen_reopen() {
	st := store.NewMemory()
	// Built with MinHash, k = 64...
	if _, err := index.Open(ctx, st, index.Config{Sketch: sample.Config{Algorithm: sketch.MinHash, K: 64}}); err != nil {
		panic(err)
	}
	// ...reopened with no settings: the recorded configuration is adopted.
	x, _ := index.Open(ctx, st, index.Config{})
	fmt.Println(x.Config().Sketch.Algorithm, x.Config().Sketch.K)
	// A contradicting setting is an error naming both values.
	_, err := index.Open(ctx, st, index.Config{Sketch: sample.Config{K: 128}})
	var ce *index.ConfigError
	fmt.Println(errors.As(err, &ce), ce.Field, err)
	// Output:
	// minhash 64
	// true k k: the index was built with 64, not 128
}

func ExampleStored() {
	st := store.NewMemory()
	index.Open(ctx, st, index.Config{Sketch: sample.Config{K: 96}})
	c, ok, _ := index.Stored(ctx, st)
	fmt.Println(ok, c.Sketch.Algorithm, c.Sketch.K, c.LSH)
	// Output: true oph 96 k=91 r=7 b=13 m=1 keybits=64
}

func ExampleIndex_Add() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	// The same name twice in one call: the last wins.
	res, _ := x.Add(ctx, doc(x, s, "a", "first text of a"), doc(x, s, "b", "text of b"), doc(x, s, "a", "second text of a"))
	fmt.Printf("%+v\n", res)
	// Adding a known name replaces it.
	res, _ = x.Add(ctx, doc(x, s, "b", "new text of b"))
	fmt.Printf("%+v\n", res)
	// Output:
	// {Added:2 Replaced:0 Duplicates:1}
	// {Added:0 Replaced:1 Duplicates:0}
}

func ExampleIndex_NewBulk() {
	dir, _ := os.MkdirTemp("", "bulk")
	defer os.RemoveAll(dir)
	st, _ := store.OpenPebble(dir, nil)
	defer st.Close()
	x, _ := index.Open(ctx, st, index.Config{})
	s, _ := x.NewSketcher()
	bk, _ := x.NewBulk() // Add and Remove wait for Close (ErrBulkOpen)
	defer bk.Close()
	total := 0
	for part := range 3 { // streamed in parts: a whole build, one bulk
		var docs []*index.Doc
		for i := range 100 {
			n := part*100 + i
			docs = append(docs, doc(x, s, fmt.Sprint("doc", n), text(n*50, 50)))
		}
		res, _ := bk.Add(ctx, docs...)
		total += res.Added
	}
	_, err := x.Add(ctx, doc(x, s, "late", "text"))
	fmt.Println(total, err)
	if err := bk.Commit(ctx); err != nil { // visible and durable from here
		panic(err)
	}
	bk.Close()
	d, ok, _ := x.Get(ctx, "doc250")
	fmt.Println(ok, d.Name)
	// Output:
	// 300 index: a bulk build is open
	// true doc250
}

func ExampleIndex_NewSortedBulk() {
	dir, _ := os.MkdirTemp("", "bulk")
	defer os.RemoveAll(dir)
	st, _ := store.OpenPebble(dir, nil)
	defer st.Close()
	x, _ := index.Open(ctx, st, index.Config{})
	s, _ := x.NewSketcher()
	var docs []*index.Doc
	for n := range 300 {
		docs = append(docs, doc(x, s, fmt.Sprint("doc", n), text(n*50, 50)))
	}
	// The caller sorts by id: the records then go straight into tables.
	slices.SortFunc(docs, func(a, b *index.Doc) int { return cmp.Compare(index.ID(a.Name), index.ID(b.Name)) })
	bk, _ := x.NewSortedBulk()
	defer bk.Close()
	res, _ := bk.Add(ctx, docs...)
	if err := bk.Commit(ctx); err != nil {
		panic(err)
	}
	bk.Close()
	d, ok, _ := x.Get(ctx, "doc250")
	fmt.Println(res.Added, ok, d.Name)
	// Output: 300 true doc250
}

func ExampleIndex_Remove() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 100)))
	n, _ := x.Remove(ctx, "a", "never-added")
	_, ok, _ := x.Get(ctx, "a")
	fmt.Println(n, ok)
	// Output: 1 false
}

func ExampleIndex_Get() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 100)))
	d, ok, _ := x.Get(ctx, "a")
	fmt.Println(ok, d.Name, len(d.Sketch.Values), len(d.Features), d.HasFingerprint)
	// Output: true a 128 96 true
}

func ExampleIndex_Identical() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", "some body"), doc(x, s, "b", "another body"))
	var q sample.Sketched
	s.Sketch(&q, []byte("some body"), false)
	x.Identical(ctx, []identity.Fingerprint{q.Fingerprint}, nil, func(i int, id uint64, name string) error {
		fmt.Println(i, name)
		return nil
	})
	// Output: 0 a
}

func ExampleIndex_Flush() {
	st := store.NewMemory()
	x, _ := index.Open(ctx, st, index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", "some body"))
	// Record the fingerprint filter, so the next Open need not rebuild it.
	fmt.Println(x.Flush(ctx))
	// Output: <nil>
}

func ExampleIndex_Verify() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{Threshold: 0.9})
	s, _ := x.NewSketcher()
	a, b := doc(x, s, "a", text(0, 200)), doc(x, s, "b", text(0, 190))
	c, ok, _ := x.Verify(a, b)
	fmt.Printf("exact %.3f estimate %.2f±%.2f match %v\n", c.Exact, c.Estimate.J, c.Estimate.StdErr, ok)
	// Output: exact 0.949 estimate 0.93±0.02 match true
}

func ExampleIndex_Join() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	docs := []*index.Doc{doc(x, s, "a", text(0, 300)), doc(x, s, "b", text(1000, 300)), doc(x, s, "c", text(5, 300))}
	// The batch path: candidates by the sort-join, verified by Verify.
	pairs, _ := x.Join(ctx, len(docs), func(dst []uint64, i int) []uint64 { return append(dst, docs[i].Sketch.Values...) }, index.BatchOptions{})
	x.VerifyPairs(ctx, pairs, func(i uint32) *index.Doc { return docs[i] }, index.BatchOptions{}, func(k int, c index.Comparison, ok bool) {
		p := pairs[k]
		fmt.Printf("%s~%s exact=%.3f match=%v\n", docs[p.A].Name, docs[p.B].Name, c.Exact, ok)
	})
	// Output: a~c exact=0.967 match=true
}

func ExampleIndex_Check() {
	st := store.NewMemory()
	x, _ := index.Open(ctx, st, index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 100)))
	// A posting nothing makes (for example from a crashed older writer).
	b := st.NewBatch()
	b.AddPosting(42, index.ID("gone"))
	b.Commit(ctx)
	r, _ := x.Check(ctx, true)
	fmt.Println(r.OK(), r.Docs, r.Stale, r.Repaired)
	r, _ = x.Check(ctx, false)
	fmt.Println(r.OK())
	// Output:
	// false 1 1 true
	// true
}

func ExampleIndex_Candidates() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	a := doc(x, s, "a", text(0, 300))
	x.Add(ctx, a)
	cs, _ := x.Candidates(ctx, nil, &a.Sketch)
	fmt.Println(len(cs), cs[0].ID == index.ID("a"), cs[0].Keys == x.Scheme().NumKeys())
	// Output: 1 true true
}

func ExampleChooseLSH() {
	p, _ := index.ChooseLSH(0.8, 128, 0)
	fmt.Printf("%v: P(0.8) = %.3f, P(0.5) = %.3f\n", p, p.Prob(0.8), p.Prob(0.5))
	// Output: k=119 r=7 b=17 m=1 keybits=64: P(0.8) = 0.982, P(0.5) = 0.125
}

func ExampleConfig_Validate() {
	err := index.Config{Sketch: sample.Config{Algorithm: sketch.BottomK}, Threshold: 1.5}.Validate()
	fmt.Println(err)
	// Output:
	// index: sampler bottomk does not give slot-wise samples, which supershingles need (oph, minhash, superminhash, prefix, lazybits, lazybits-batched; weighted: cws, icws)
	// index: threshold 1.5 outside (0, 1]
}

func ExampleAppendDoc() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{Sketch: sample.Config{K: 8}, LSH: index.Config{}.LSH})
	s, _ := x.NewSketcher()
	rec, _ := index.AppendDoc(nil, doc(x, s, "a", "some text"))
	d, err := index.DecodeDoc(rec)
	fmt.Println(d.Name, len(d.Sketch.Values), err)
	// Output: a 8 <nil>
}

func ExampleAccept() {
	// Verified by exact Jaccard: the threshold is strict.
	fmt.Println(index.Accept(0.8, index.DefaultSlack, 128, 0.79, true))
	// Verified by a 128-sample estimate: within 1.645 standard errors.
	fmt.Println(index.Accept(0.8, index.DefaultSlack, 128, 0.79, false))
	// Output:
	// false
	// true
}

func ExampleIndex_LoadPostings() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 500)))
	// A server loads the postings once; its adds keep them current.
	n, err := x.LoadPostings(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("postings in memory:", n)
	x.Add(ctx, doc(x, s, "b", text(1000, 500)))
	ms, _ := x.Query(ctx, nil, doc(x, s, "q", text(1002, 498)), "")
	fmt.Println(ms[0].Name)
	// Output:
	// postings in memory: 18
	// b
}
