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
