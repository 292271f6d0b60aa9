package dedup

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/neardup/neardup/cluster"
)

// Member is one document of a cluster.
type Member struct {
	Name string
	// Seq is the document's position in this run, -1 for a stored one.
	Seq int
	// Similarity to the kept document: exact Jaccard when Exact, the
	// sketch estimate otherwise, 1 for the kept document and identical
	// copies; -1 when the two were only connected through other members
	// and never compared.
	Similarity float64
	Exact      bool
	Identical  bool
}

// Cluster is a group of two or more near-duplicate documents.
type Cluster struct {
	// ID numbers clusters 1, 2, … in order of their first member.
	ID int
	// Kept is the name of the member that is kept: empty under
	// cluster.KeepNone, unless the first member is a stored document of an
	// earlier run (which this run cannot drop).
	Kept string
	// Members lists every member, kept first (under cluster.KeepNone the
	// representative the similarities refer to), then in input order (stored
	// documents from earlier runs before this run's).
	Members []Member
	// Edges are the verified pairs that joined the cluster: a maximum
	// spanning tree of its pairs, or under Star the pairs to the kept
	// document.
	Edges []Pair
	// Oversize reports more than ClusterOptions.MaxSize members.
	Oversize bool
}

// cluster is stage 6: the verified pairs, sorted, clustered.
func (r *run) cluster() error {
	sortPairs(r.res.Pairs)
	r.sum.Pairs = len(r.res.Pairs)
	start := r.ev.begin(StageClust, int64(len(r.res.Pairs)))
	var err error
	if r.res.Clusters, err = buildClusters(r.o.Cluster, r.x.Config().Threshold, r.res.Docs, r.res.Pairs, r.res.Duplicate); err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	r.sum.Clusters = len(r.res.Clusters)
	r.ev.end(StageClust, int64(len(r.res.Pairs)), start)
	return nil
}

// sortPairs sorts pairs by (SeqB, SeqA, A): the order of Result.Pairs.
func sortPairs(pairs []Pair) {
	slices.SortFunc(pairs, func(a, b Pair) int {
		if a.SeqB != b.SeqB {
			return cmpInt(a.SeqB, b.SeqB)
		}
		if a.SeqA != b.SeqA {
			return cmpInt(a.SeqA, b.SeqA)
		}
		return strings.Compare(a.A, b.A)
	})
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// buildClusters clusters the documents joined by verified pairs with
// package cluster and marks the dropped members in dup (by Seq): all but
// the kept one, or under cluster.KeepNone all of this run's.
//
// Node ids are positions: stored documents from earlier runs first (in
// order of name), then this run's documents in input order, so KeepFirst
// is input order and cluster ids follow it. Stored documents are pinned:
// an earlier run kept them, this one cannot drop them. An exact duplicate
// inherits every verified edge of its original (it has the same text, so
// the same similarities), plus an edge of similarity 1 to it; so the star
// policy treats copies exactly as their original.
func buildClusters(o ClusterOptions, threshold float64, docs []Doc, pairs []Pair, dup map[int]bool) ([]Cluster, error) {
	var storedNames []string
	for _, p := range pairs {
		if p.SeqA < 0 {
			storedNames = append(storedNames, p.A)
		}
	}
	slices.Sort(storedNames)
	storedNames = slices.Compact(storedNames)
	ns := len(storedNames)
	pos := positions(docs)
	id := func(seq int, name string) uint64 {
		if seq < 0 {
			i, _ := slices.BinarySearch(storedNames, name)
			return uint64(i)
		}
		return uint64(ns + pos(seq))
	}
	name := func(v uint64) string {
		if v < uint64(ns) {
			return storedNames[v]
		}
		return docs[v-uint64(ns)].Name
	}
	seq := func(v uint64) int {
		if v < uint64(ns) {
			return -1
		}
		return docs[v-uint64(ns)].Seq
	}

	b, err := cluster.NewBuilder(cluster.Options{Threshold: math.Min(threshold, 1), Star: o.Star, Keep: o.Keep, Field: "key", Descending: o.Descending, MaxSize: o.MaxSize})
	if err != nil {
		return nil, err
	}
	type key struct{ a, b uint64 }
	byPair := map[key]*Pair{}
	put := func(a, b uint64, p *Pair) {
		if a > b {
			a, b = b, a
		}
		byPair[key{a, b}] = p
	}
	get := func(a, b uint64) (*Pair, bool) {
		if a > b {
			a, b = b, a
		}
		p, ok := byPair[key{a, b}]
		return p, ok
	}
	aliases := map[uint64][]uint64{}
	var edges []cluster.Edge
	for i := range pairs {
		p := &pairs[i]
		a, c := id(p.SeqA, p.A), id(p.SeqB, p.B)
		put(a, c, p)
		edges = append(edges, cluster.Edge{A: a, B: c, Similarity: p.Similarity})
		if p.Identical {
			aliases[a] = append(aliases[a], c)
		}
	}
	// Copies inherit their original's edges (and copies of the other end's).
	n := len(edges)
	for _, e := range edges[:n] {
		for _, ca := range aliases[e.A] {
			if ca != e.B {
				edges = append(edges, cluster.Edge{A: ca, B: e.B, Similarity: e.Similarity})
			}
		}
		for _, cb := range aliases[e.B] {
			if cb != e.A {
				edges = append(edges, cluster.Edge{A: e.A, B: cb, Similarity: e.Similarity})
			}
		}
	}
	for _, cs := range aliases {
		for i, x := range cs {
			for _, y := range cs[i+1:] {
				edges = append(edges, cluster.Edge{A: x, B: y, Similarity: 1})
			}
		}
	}
	b.AddEdges(edges)
	for v := uint64(0); v < uint64(ns); v++ {
		b.AddDoc(cluster.Doc{ID: v, Seq: v, Pinned: true})
	}
	// Only the documents of an edge can be in a cluster (cluster.Builder
	// leaves the others out): at a million documents, adding every one
	// took most of the stage.
	var ends []uint64
	for _, e := range edges {
		ends = append(ends, e.A, e.B)
	}
	slices.Sort(ends)
	for _, v := range slices.Compact(ends) {
		if v < uint64(ns) {
			continue
		}
		d := &docs[v-uint64(ns)]
		cd := cluster.Doc{ID: v, Seq: v, Length: int64(d.Bytes)}
		if d.Key != "" {
			cd.Attrs = map[string]string{"key": d.Key}
		}
		b.AddDoc(cd)
	}
	res := b.Result()

	// The similarity of u to v: a verified pair, or through copies.
	orig := map[uint64]uint64{}
	for a, cs := range aliases {
		for _, c := range cs {
			orig[c] = a
		}
	}
	root := func(v uint64) uint64 {
		if a, ok := orig[v]; ok {
			return a
		}
		return v
	}
	out := make([]Cluster, 0, len(res.Clusters))
	for _, rc := range res.Clusters {
		c := Cluster{ID: len(out) + 1, Kept: name(rc.Kept), Oversize: rc.Oversize}
		c.Members = append(c.Members, Member{Name: c.Kept, Seq: seq(rc.Kept), Similarity: 1, Exact: true})
		if o.Keep == cluster.KeepNone && seq(rc.Kept) >= 0 {
			c.Kept = ""
			dup[seq(rc.Kept)] = true
		}
		for _, v := range rc.Members { // increasing id: input order
			if v == rc.Kept {
				continue
			}
			m := Member{Name: name(v), Seq: seq(v), Similarity: -1}
			if root(v) == root(rc.Kept) {
				m.Similarity, m.Exact, m.Identical = 1, true, true
			} else if p, ok := get(root(v), root(rc.Kept)); ok {
				m.Similarity, m.Exact = p.Similarity, p.Exact
			}
			c.Members = append(c.Members, m)
			if m.Seq >= 0 {
				dup[m.Seq] = true
			}
		}
		for _, e := range rc.Edges {
			if p, ok := get(e.A, e.B); ok {
				c.Edges = append(c.Edges, *p)
				continue
			}
			// An edge inherited by a copy.
			c.Edges = append(c.Edges, Pair{A: name(e.A), B: name(e.B), SeqA: seq(e.A), SeqB: seq(e.B), Similarity: e.Similarity, Estimate: e.Similarity})
		}
		out = append(out, c)
	}
	return out, nil
}

// positions returns the position in docs of the document with a given
// Seq. The documents of a run come in increasing Seq, so it searches
// them; a map is made only when they do not.
func positions(docs []Doc) func(seq int) int {
	if slices.IsSortedFunc(docs, func(a, b Doc) int { return cmp.Compare(a.Seq, b.Seq) }) {
		return func(seq int) int {
			// Seq is the position unless records were rejected for
			// repeated ids before it: look there first.
			if seq < len(docs) && docs[seq].Seq == seq {
				return seq
			}
			i, _ := slices.BinarySearchFunc(docs, seq, func(d Doc, seq int) int { return cmp.Compare(d.Seq, seq) })
			return i
		}
	}
	bySeq := make(map[int]int, len(docs))
	for i := range docs {
		bySeq[docs[i].Seq] = i
	}
	return func(seq int) int { return bySeq[seq] }
}
