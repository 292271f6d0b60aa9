package dedup

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// KeepPolicy chooses which member of a cluster is kept.
type KeepPolicy uint8

// Keep policies.
const (
	// KeepFirst keeps the member seen first (earliest in the input, or a
	// stored document from an earlier run).
	KeepFirst KeepPolicy = iota
	// KeepLongest keeps the member with the longest body (ties: first).
	KeepLongest
	// KeepKey keeps the member with the smallest value of the metadata
	// field ClusterOptions.KeyField (ties: first); members without it come
	// last.
	KeepKey
)

// ParseKeepPolicy parses "first", "longest" or "key".
func ParseKeepPolicy(s string) (KeepPolicy, error) {
	switch s {
	case "first", "":
		return KeepFirst, nil
	case "longest":
		return KeepLongest, nil
	case "key", "meta":
		return KeepKey, nil
	}
	return 0, fmt.Errorf("dedup: unknown keep policy %q (first, longest or key)", s)
}

// ClusterOptions configure clustering.
type ClusterOptions struct {
	// Keep is the keep policy. The default is KeepFirst.
	Keep KeepPolicy
	// KeyField is the metadata field KeepKey orders by (a JSONL dotted path
	// that must also be read: it is added to the reader's MetaFields).
	KeyField string
	// Star admits a document to a cluster only when it is verified similar
	// (at the threshold) to the cluster's kept document, not merely
	// connected to it through other members: the guard against chaining.
	// Documents that fail the test form clusters of their own. The default
	// is off (connected components of verified pairs).
	Star bool
	// MaxSize flags clusters with more members than this as oversize; they
	// are reported with the edges that joined them. The default is 1000.
	MaxSize int
}

func (c *ClusterOptions) ensureDefaults() {
	if c.MaxSize == 0 {
		c.MaxSize = 1000
	}
}

func (c *ClusterOptions) validate() error {
	if c.Keep == KeepKey && c.KeyField == "" {
		return errors.New("keep policy key needs a key field")
	}
	if c.MaxSize < 0 {
		return fmt.Errorf("max cluster size %d < 0", c.MaxSize)
	}
	return nil
}

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
	// ID numbers clusters 1, 2, … in order of their kept document.
	ID int
	// Kept is the name of the member that is kept.
	Kept string
	// Members lists every member, kept first, then in input order.
	Members []Member
	// Edges are the verified pairs that joined the cluster.
	Edges []Pair
	// Oversize reports more than ClusterOptions.MaxSize members.
	Oversize bool
}

// buildClusters groups the documents joined by verified pairs into clusters,
// picks the kept member of each by the policy, and marks the others in dup
// (by Seq). Exact duplicates are aliases of their original: they join its
// cluster, may be chosen as its kept member, and connect nothing
// themselves. Deterministic: it depends only on the sorted pairs and the
// documents' order.
func buildClusters(o ClusterOptions, docs []Doc, pairs []Pair, dup map[int]bool) []Cluster {
	g := newGraph(docs, pairs)
	// Components of the originals, by union-find over the verified edges.
	uf := newUnionFind(g.n)
	for _, e := range g.edges {
		uf.union(e.a, e.b)
	}
	comps := map[int][]int{}
	var order []int
	for v := 0; v < g.n; v++ {
		if g.isAlias(v) || (len(g.adj[v]) == 0 && len(g.aliases[v]) == 0) {
			continue
		}
		r := uf.find(v)
		if _, ok := comps[r]; !ok {
			order = append(order, r)
		}
		comps[r] = append(comps[r], v)
	}
	queue := make([][]int, 0, len(order))
	for _, r := range order {
		queue = append(queue, comps[r])
	}
	var out []Cluster
	for len(queue) > 0 {
		orig := queue[0]
		queue = queue[1:]
		// Every member, aliases included, may be the kept one.
		var all []int
		for _, v := range orig {
			all = append(all, v)
			all = append(all, g.aliases[v]...)
		}
		kept := all[0]
		for _, v := range all[1:] {
			if g.better(o, v, kept) {
				kept = v
			}
		}
		center := g.orig(kept)
		if o.Star {
			// Only the kept document's verified neighbours join it; the
			// rest are clustered again among themselves.
			in := map[int]bool{center: true}
			for _, e := range g.adj[center] {
				in[e.other(center)] = true
			}
			var star, rest []int
			for _, v := range orig {
				if in[v] {
					star = append(star, v)
				} else {
					rest = append(rest, v)
				}
			}
			queue = append(queue, g.components(rest)...)
			orig = star
			all = all[:0]
			for _, v := range orig {
				all = append(all, v)
				all = append(all, g.aliases[v]...)
			}
		}
		if len(all) < 2 {
			continue
		}
		slices.SortFunc(all, func(u, v int) int { return g.cmpOrder(u, v) })
		c := Cluster{Kept: g.name(kept)}
		c.Members = append(c.Members, Member{Name: g.name(kept), Seq: g.seq(kept), Similarity: 1, Exact: true})
		for _, v := range all {
			if v == kept {
				continue
			}
			m := Member{Name: g.name(v), Seq: g.seq(v), Similarity: -1}
			if g.orig(v) == center {
				m.Similarity, m.Exact, m.Identical = 1, true, true
			} else if e, ok := g.edge(g.orig(v), center); ok {
				m.Similarity, m.Exact = e.p.Similarity, e.p.Exact
			}
			c.Members = append(c.Members, m)
			if m.Seq >= 0 {
				dup[m.Seq] = true
			}
		}
		in := map[int]bool{}
		for _, v := range orig {
			in[v] = true
		}
		for _, v := range orig {
			for _, e := range g.adj[v] {
				if e.a == v && in[e.b] { // each edge once, from its first end
					c.Edges = append(c.Edges, *e.p)
				}
			}
			for _, a := range g.aliases[v] {
				c.Edges = append(c.Edges, *g.aliasPair[a])
			}
		}
		slices.SortFunc(c.Edges, func(x, y Pair) int {
			if x.SeqB != y.SeqB {
				return x.SeqB - y.SeqB
			}
			if x.SeqA != y.SeqA {
				return x.SeqA - y.SeqA
			}
			return strings.Compare(x.A, y.A)
		})
		c.Oversize = o.MaxSize > 0 && len(c.Members) > o.MaxSize
		out = append(out, c)
	}
	// Number clusters in the order of their kept documents.
	slices.SortFunc(out, func(x, y Cluster) int {
		return g.cmpOrder(g.node(x.Members[0].Seq, x.Kept), g.node(y.Members[0].Seq, y.Kept))
	})
	for i := range out {
		out[i].ID = i + 1
	}
	return out
}

// graph is the verified-pair graph of a run.
type graph struct {
	docs        []Doc
	bySeq       map[int]int
	stored      map[string]int
	storedNames []string
	n           int
	edges       []gedge
	adj         [][]gedge
	aliasOf     map[int]int   // exact duplicate -> its original
	aliases     map[int][]int // original -> its exact duplicates
	aliasPair   map[int]*Pair
}

type gedge struct {
	a, b int
	p    *Pair
}

func (e gedge) other(v int) int {
	if e.a == v {
		return e.b
	}
	return e.a
}

func newGraph(docs []Doc, pairs []Pair) *graph {
	g := &graph{docs: docs, bySeq: make(map[int]int, len(docs)), stored: map[string]int{},
		aliasOf: map[int]int{}, aliases: map[int][]int{}, aliasPair: map[int]*Pair{}}
	for i := range docs {
		g.bySeq[docs[i].Seq] = i
	}
	for i := range pairs {
		p := &pairs[i]
		a, b := g.node(p.SeqA, p.A), g.node(p.SeqB, p.B)
		if p.Identical {
			g.aliasOf[b] = a
			g.aliases[a] = append(g.aliases[a], b)
			g.aliasPair[b] = p
			continue
		}
		g.edges = append(g.edges, gedge{a, b, p})
	}
	g.n = len(docs) + len(g.storedNames)
	g.adj = make([][]gedge, g.n)
	for _, e := range g.edges {
		g.adj[e.a] = append(g.adj[e.a], e)
		g.adj[e.b] = append(g.adj[e.b], e)
	}
	return g
}

// node returns the node of a document of this run (seq >= 0) or of a stored
// one (seq < 0, by name), adding stored ones as they come.
func (g *graph) node(seq int, name string) int {
	if seq >= 0 {
		return g.bySeq[seq]
	}
	v, ok := g.stored[name]
	if !ok {
		v = len(g.docs) + len(g.storedNames)
		g.stored[name] = v
		g.storedNames = append(g.storedNames, name)
	}
	return v
}

func (g *graph) isStored(v int) bool { return v >= len(g.docs) }
func (g *graph) isAlias(v int) bool  { _, ok := g.aliasOf[v]; return ok }

func (g *graph) orig(v int) int {
	if a, ok := g.aliasOf[v]; ok {
		return a
	}
	return v
}

func (g *graph) name(v int) string {
	if g.isStored(v) {
		return g.storedNames[v-len(g.docs)]
	}
	return g.docs[v].Name
}

func (g *graph) seq(v int) int {
	if g.isStored(v) {
		return -1
	}
	return g.docs[v].Seq
}

// cmpOrder orders nodes as the input did: stored documents first (by name),
// then by Seq.
func (g *graph) cmpOrder(u, v int) int {
	su, sv := g.isStored(u), g.isStored(v)
	switch {
	case su && sv:
		return strings.Compare(g.name(u), g.name(v))
	case su:
		return -1
	case sv:
		return 1
	}
	return g.docs[u].Seq - g.docs[v].Seq
}

// better reports whether u should be kept rather than v.
func (g *graph) better(o ClusterOptions, u, v int) bool {
	su, sv := g.isStored(u), g.isStored(v)
	if su || sv {
		// A stored document is already kept by an earlier run.
		return g.cmpOrder(u, v) < 0
	}
	du, dv := &g.docs[u], &g.docs[v]
	switch o.Keep {
	case KeepLongest:
		if du.Bytes != dv.Bytes {
			return du.Bytes > dv.Bytes
		}
	case KeepKey:
		if (du.Key == "") != (dv.Key == "") {
			return dv.Key == ""
		}
		if du.Key != dv.Key {
			return du.Key < dv.Key
		}
	}
	return du.Seq < dv.Seq
}

// edge returns the verified edge between u and v, if any.
func (g *graph) edge(u, v int) (gedge, bool) {
	for _, e := range g.adj[u] {
		if e.other(u) == v {
			return e, true
		}
	}
	return gedge{}, false
}

// components splits nodes into the connected components of the edges
// among them, each in increasing order, ordered by their first node.
func (g *graph) components(nodes []int) [][]int {
	if len(nodes) == 0 {
		return nil
	}
	local := make(map[int]int, len(nodes)) // node -> index in nodes
	for i, v := range nodes {
		local[v] = i
	}
	uf := newUnionFind(len(nodes))
	for i, v := range nodes {
		for _, e := range g.adj[v] {
			if j, ok := local[e.other(v)]; ok {
				uf.union(i, j)
			}
		}
	}
	groups := map[int][]int{}
	var order []int
	for i, v := range nodes {
		r := uf.find(i)
		if _, ok := groups[r]; !ok {
			order = append(order, r)
		}
		groups[r] = append(groups[r], v)
	}
	out := make([][]int, 0, len(order))
	for _, r := range order {
		out = append(out, groups[r])
	}
	return out
}

// unionFind is a disjoint-set forest with path halving and union by size:
// near-constant amortized time per operation.
type unionFind struct {
	parent, size []int32
}

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int32, n), size: make([]int32, n)}
	for i := range u.parent {
		u.parent[i] = int32(i)
		u.size[i] = 1
	}
	return u
}

func (u *unionFind) find(x int) int {
	p := u.parent
	for int(p[x]) != x {
		p[x] = p[p[x]]
		x = int(p[x])
	}
	return x
}

func (u *unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	if u.size[ra] < u.size[rb] {
		ra, rb = rb, ra
	}
	u.parent[rb] = int32(ra)
	u.size[ra] += u.size[rb]
}
