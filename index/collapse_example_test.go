package index_test

import (
	"fmt"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/store"
)

func ExampleCollapser_Collapse() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{Threshold: 0.8})
	c, _ := x.NewCollapser(index.CollapseOptions{}) // kept up to date by x.Add and x.Remove
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 1000)), doc(x, s, "a-copy", text(10, 990)), doc(x, s, "b", text(5000, 1000)))
	// The ranked results of some search: a-copy is a near-duplicate of the
	// better-ranked a.
	res, _ := c.Collapse(ctx, []string{"a", "b", "a-copy", "unknown"})
	fmt.Println("kept:", res.Kept)
	fmt.Println("collapsed:", res.Collapsed)
	fmt.Println("unknown:", res.Unknown)
	// Output:
	// kept: [a b unknown]
	// collapsed: [{a-copy a}]
	// unknown: [unknown]
}

func ExampleIndex_QueryMany() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{Threshold: 0.8})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 1000)), doc(x, s, "b", text(5000, 1000)))
	qs := []*index.Doc{doc(x, s, "q1", text(10, 990)), doc(x, s, "q2", text(5005, 1000)), doc(x, s, "q3", text(9000, 100))}
	// Two store round trips for the whole batch.
	x.QueryMany(ctx, qs, nil, func(i int, ms []index.Match) error {
		fmt.Print(qs[i].Name, ":")
		for _, m := range ms {
			fmt.Printf(" %s %.2f", m.Name, m.Exact)
		}
		fmt.Println()
		return nil
	})
	// Output:
	// q1: a 0.99
	// q2: b 0.99
	// q3:
}

func ExampleIndex_GetMany() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 100)))
	x.GetMany(ctx, []string{"a", "b"}, func(i int, d *index.Doc, ok bool) error {
		if ok {
			fmt.Println(d.Name, len(d.Sketch.Values))
		} else {
			fmt.Println("no document", i)
		}
		return nil
	})
	// Output:
	// a 128
	// no document 1
}

func ExampleCollapser_Load() {
	st := store.NewMemory()
	x, _ := index.Open(ctx, st, index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 100)), doc(x, s, "b", text(200, 100)))
	// Another process opens the index and loads its collapse table at once.
	y, _ := index.Open(ctx, st, index.Config{})
	c, _ := y.NewCollapser(index.CollapseOptions{})
	n, _ := c.Load(ctx)
	fmt.Println(n, c.Table().Params().B*2, "bytes of signature per document")
	// Output: 2 10 bytes of signature per document
}
