package index_test

import (
	"fmt"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

func Example() {
	smp, _ := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 128, Seed: 1})
	x, _ := index.Open(store.NewMemory(), index.Config{
		Header:    smp.Header(),
		LSH:       lsh.Banding(4, 32),
		Threshold: 0.8,
	})
	doc := func(name string, from, to uint64) *index.Doc {
		var fs []feature.Feature
		var ids []uint64
		for id := from; id < to; id++ {
			fs = append(fs, feature.Feature{ID: id, Weight: 1})
			ids = append(ids, id)
		}
		return &index.Doc{Name: name, Sketch: sketch.Sketch{Header: smp.Header(), Values: smp.Sketch(nil, fs)}, Features: ids}
	}
	_ = x.Add(doc("a", 0, 1000), doc("far", 5000, 6000))
	q := doc("query", 10, 1000) // J = 990/1000 with "a"
	matches, _ := x.Query(nil, &q.Sketch, q.Features, "")
	for _, m := range matches {
		fmt.Printf("%s exact=%.2f\n", m.Name, m.Exact)
	}
	// Output: a exact=0.99
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
