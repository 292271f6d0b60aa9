package cluster_test

import (
	"fmt"
	"os"

	"github.com/neardup/neardup/cluster"
)

func ExampleBuilder() {
	b, err := cluster.NewBuilder(cluster.Options{Threshold: 0.8, Keep: cluster.KeepLongest})
	if err != nil {
		panic(err)
	}
	b.AddDoc(cluster.Doc{ID: 3, Length: 900})
	b.AddEdges([]cluster.Edge{{A: 1, B: 2, Similarity: 0.93}, {A: 3, B: 2, Similarity: 0.88}, {A: 7, B: 8, Similarity: 0.5}})
	r := b.Result()
	r.WriteJSONL(os.Stdout)
	fmt.Println("duplicates:", r.Duplicates(), "rejected edges:", r.Rejected)
	// Output:
	// {"cluster":1,"kept":3,"members":[1,2,3],"edges":[{"a":1,"b":2,"similarity":0.93},{"a":2,"b":3,"similarity":0.88}]}
	// duplicates: 2 rejected edges: 1
}

func ExampleOptions_star() {
	// A chain 1–2–3 where 1 and 3 are not close: with Star, 3 is not
	// dropped as a duplicate of 1.
	b, _ := cluster.NewBuilder(cluster.Options{Threshold: 0.8, Star: true})
	b.AddEdges([]cluster.Edge{{A: 1, B: 2, Similarity: 0.9}, {A: 2, B: 3, Similarity: 0.9}})
	for _, c := range b.Result().Clusters {
		fmt.Println(c.Kept, c.Members)
	}
	// Output: 1 [1 2]
}

func ExampleKeepNone() {
	// Every member of a cluster is dropped, but for a pinned document
	// (one an earlier run kept), which stays.
	b, _ := cluster.NewBuilder(cluster.Options{Threshold: 0.8, Keep: cluster.KeepNone})
	b.AddDoc(cluster.Doc{ID: 7, Pinned: true})
	b.AddEdges([]cluster.Edge{{A: 1, B: 2, Similarity: 0.9}, {A: 2, B: 3, Similarity: 0.85}, {A: 7, B: 8, Similarity: 0.95}})
	r := b.Result()
	for _, c := range r.Clusters {
		fmt.Println(c.Kept, c.Members, c.KeptDropped)
	}
	fmt.Println("duplicates:", r.Duplicates())
	// Output:
	// 1 [1 2 3] true
	// 7 [7 8] false
	// duplicates: 4
}

func ExampleUnionFind() {
	u := cluster.NewUnionFind(4)
	u.Union(0, 1)
	u.Union(2, 3)
	u.Union(1, 0)
	fmt.Println(u.Sets(), u.Find(1) == u.Find(0), u.Size(3))
	// Output: 2 true 2
}

func ExampleNewBuilder() {
	_, err := cluster.NewBuilder(cluster.Options{Threshold: 1.5, Keep: cluster.KeepField})
	fmt.Println(err)
	// Output:
	// cluster: invalid options: threshold 1.5, want in [0, 1]
	// KeepField needs a Field
}

func ExampleOptions_Validate() {
	fmt.Println(cluster.Options{}.Validate())
	fmt.Println(cluster.Options{Keep: cluster.KeepField, Field: "date", Descending: true}.Validate())
	// Output:
	// <nil>
	// <nil>
}

// KeepField keeps the member with the best value of a metadata field, here
// the most recent crawl date.
func ExampleBuilder_AddDoc() {
	b, _ := cluster.NewBuilder(cluster.Options{Keep: cluster.KeepField, Field: "date", Descending: true})
	b.AddDoc(cluster.Doc{ID: 1, Attrs: map[string]string{"date": "20240105"}})
	b.AddDoc(cluster.Doc{ID: 2, Attrs: map[string]string{"date": "20250310"}})
	b.AddDoc(cluster.Doc{ID: 3}) // no date: last
	b.AddEdges([]cluster.Edge{{A: 1, B: 2, Similarity: 0.9}, {A: 2, B: 3, Similarity: 0.9}})
	c := b.Result().Clusters[0]
	fmt.Println(c.Kept, c.Members)
	// Output: 2 [1 2 3]
}

func ExampleBuilder_AddEdge() {
	// A pair reported twice, in either order, counts once with its
	// largest similarity; a self-pair is rejected.
	b, _ := cluster.NewBuilder(cluster.Options{})
	b.AddEdge(cluster.Edge{A: 1, B: 2, Similarity: 0.8})
	b.AddEdge(cluster.Edge{A: 2, B: 1, Similarity: 0.9})
	b.AddEdge(cluster.Edge{A: 3, B: 3, Similarity: 1})
	r := b.Result()
	fmt.Println(r.Edges, r.Rejected, r.Clusters[0].Edges)
	// Output: 1 1 [{1 2 0.9}]
}

func ExampleBuilder_Result() {
	// Result may be called again after more additions.
	b, _ := cluster.NewBuilder(cluster.Options{MaxSize: 2})
	b.AddEdge(cluster.Edge{A: 1, B: 2, Similarity: 0.9})
	fmt.Println(len(b.Result().Clusters), b.Result().Oversize)
	b.AddEdge(cluster.Edge{A: 2, B: 3, Similarity: 0.9})
	r := b.Result()
	fmt.Println(r.Clusters[0].Members, r.Oversize, r.Duplicates())
	// Output:
	// 1 []
	// [1 2 3] [1] 2
}

func ExampleResult_WriteJSONL() {
	b, _ := cluster.NewBuilder(cluster.Options{MaxSize: 2})
	b.AddEdges([]cluster.Edge{{A: 5, B: 6, Similarity: 1}, {A: 1, B: 2, Similarity: 0.9}, {A: 2, B: 3, Similarity: 0.95}})
	// Clusters are ordered by their smallest member.
	b.Result().WriteJSONL(os.Stdout)
	// Output:
	// {"cluster":1,"kept":1,"members":[1,2,3],"edges":[{"a":1,"b":2,"similarity":0.9},{"a":2,"b":3,"similarity":0.95}],"oversize":true}
	// {"cluster":5,"kept":5,"members":[5,6],"edges":[{"a":5,"b":6,"similarity":1}]}
}

func ExampleUnionFind_Add() {
	// The zero value is an empty forest, grown one element at a time.
	var u cluster.UnionFind
	a, b, c := u.Add(), u.Add(), u.Add()
	fmt.Println(u.Union(a, c), u.Union(c, a), u.Len(), u.Sets())
	fmt.Println(u.Find(a) == u.Find(c), u.Find(b) == u.Find(a), u.Size(b))
	// Output:
	// true false 3 2
	// true false 1
}
