package index_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/store"
)

func ExampleCollapseOptions_bing() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{Threshold: 0.8})
	// The book's scheme (6.1): 6 supershingles of 5 samples, 16 bits
	// each, collapsed when at least 4 of 6 agree, without verification.
	bing := lsh.Bing()
	c, _ := x.NewCollapser(index.CollapseOptions{LSH: &bing, Unverified: true})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 1000)), doc(x, s, "a-copy", text(0, 1000)), doc(x, s, "b", text(5000, 1000)))
	res, _ := c.Collapse(ctx, []string{"a", "b", "a-copy"})
	fmt.Println(c.Table().Params(), res.Kept, res.Collapsed)
	// Output: k=30 r=5 b=6 m=4 keybits=16 [a b] [{a-copy a}]
}

func ExampleIndex_Backup() {
	tmp, _ := os.MkdirTemp("", "backup")
	defer os.RemoveAll(tmp)
	st, _ := store.OpenPebble(filepath.Join(tmp, "idx"), nil)
	defer st.Close()
	x, _ := index.Open(ctx, st, index.Config{})
	s, _ := x.NewSketcher()
	x.Add(ctx, doc(x, s, "a", text(0, 500)))
	// While the index serves: a checkpoint, then a working copy of it.
	if err := x.Backup(ctx, filepath.Join(tmp, "backup")); err != nil {
		panic(err)
	}
	if err := store.RestorePebble(filepath.Join(tmp, "backup"), filepath.Join(tmp, "restored")); err != nil {
		panic(err)
	}
	r, _ := store.OpenPebble(filepath.Join(tmp, "restored"), nil)
	defer r.Close()
	y, _ := index.Open(ctx, r, index.Config{})
	ms, _ := y.Query(ctx, nil, doc(y, s, "q", text(0, 500)), "")
	fmt.Println(ms[0].Name)
	// Output: a
}

func ExampleCheap() {
	x, _ := index.Open(ctx, store.NewMemory(), index.Config{})
	s, _ := x.NewSketcher()
	var sk sample.Sketched
	s.Sketch(&sk, []byte(text(0, 30)), false)
	// Without asking for feature sets (false), a short document keeps its
	// ids in short form (4 bytes each, no more than its 1 KB sketch), a
	// long one does not.
	short := x.NewDoc("short", &sk, false)
	s.Sketch(&sk, []byte(text(0, 3000)), false)
	long := x.NewDoc("long", &sk, false)
	fmt.Println(short.Compact, len(short.Features), index.Cheap(len(short.Features), &short.Sketch))
	fmt.Println(long.Compact, len(long.Features))
	// Output:
	// true 26 true
	// false 0
}
