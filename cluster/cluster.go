// Package cluster provides deterministic clustering of verified
// near-duplicate pairs: union-find connected components, an optional star
// (centre) policy against chaining, oversize reports, and the choice of the
// one document to keep per cluster.
//
// Pairs found by the index and verified (by sketch estimate or exact Jaccard)
// are edges; a cluster is a connected component of them, the "simple
// connected-component clustering" that Manasse, "On the Efficient
// Determination of Most Near Neighbors" (the book), found sufficient at
// high thresholds (book 3.2). Similarity is not transitive, so components can
// chain: one shared template once merged 743,779 unrelated documents. Three
// guards: a cluster only ever grows through verified edges at or above the
// threshold; the star policy admits a document only if it has a verified edge
// at or above the threshold to its cluster's centre (the document that is
// kept), so every dropped document is close to the one that survives; and
// clusters larger than a limit are flagged, with the edges that joined them
// (a maximum spanning forest), for inspection.
//
// The output is a pure function of the set of edges and documents: the
// order edges arrive in and the number of goroutines adding them do not
// matter. Members are listed in increasing id order, clusters are
// identified and ordered by their smallest member, and ties everywhere are
// broken by ids, so the same input gives byte-identical output.
//
// This package does not find or verify pairs (package index does) and does
// not read documents: callers pass the attributes the keep policy needs.
package cluster

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
)

// ErrOptions is returned for invalid options.
var ErrOptions = errors.New("cluster: invalid options")

// Edge is a verified pair of documents and their similarity. The order of
// A and B does not matter.
type Edge struct {
	A, B       uint64
	Similarity float64
}

// Doc carries what the keep policies need to know about a document.
// Documents that appear only in edges behave as Doc{ID: id}.
type Doc struct {
	ID uint64
	// Seq is the position in which the document was seen (input order);
	// KeepFirst keeps the smallest. Ties, including the default 0, go to the
	// smallest ID.
	Seq uint64
	// Length is the document's length (bytes or words); KeepLongest keeps
	// the largest.
	Length int64
	// Attrs are metadata fields for KeepField (for example a crawl date or
	// a quality score). Values that parse as numbers compare numerically.
	Attrs map[string]string
	// Pinned documents are preferred for keeping over any unpinned one,
	// whatever the policy (which then orders pinned documents among
	// themselves): for example documents an earlier run already kept in a
	// persistent index, which a new run cannot drop.
	Pinned bool
}

// Keep selects the document kept in each cluster (and, with Star, the
// centre).
type Keep int

const (
	// KeepFirst keeps the document seen first (smallest Seq, then ID).
	KeepFirst Keep = iota
	// KeepLongest keeps the longest document (largest Length, then first).
	KeepLongest
	// KeepField keeps the document with the smallest (or, with
	// Options.Descending, largest) value of Options.Field; documents
	// without the field come last; ties go to the first.
	KeepField
	// KeepNone keeps no member: the caller drops every member of a
	// cluster, for a corpus that must hold no document that has a
	// near-duplicate. Cluster.Kept is then the cluster's representative,
	// chosen as KeepFirst chooses (the centre under Star), which the
	// members' similarities refer to; a Pinned member, which the caller
	// cannot drop, is still preferred.
	KeepNone
)

// Options configure clustering. The zero value clusters by connected
// components over all edges and keeps the first document.
type Options struct {
	// Threshold drops edges whose similarity is below it (counted in
	// Result.Rejected). The default 0 accepts every edge.
	Threshold float64
	// Star enables the centre policy: within a connected component, the
	// best document by Keep becomes a centre and admits every unassigned
	// document with a verified edge of similarity >= StarThreshold to it;
	// the best remaining document becomes the next centre, and so on. The
	// default false uses plain connected components.
	Star bool
	// StarThreshold is the similarity to the centre required by Star. The
	// default 0 means Threshold.
	StarThreshold float64
	// Keep is the keep policy; the default is KeepFirst.
	Keep Keep
	// Field names the attribute KeepField compares.
	Field string
	// Descending makes KeepField keep the largest value.
	Descending bool
	// MaxSize flags clusters with more members as Oversize. The default 0
	// means no limit.
	MaxSize int
}

// Validate reports every problem with o at once.
func (o Options) Validate() error {
	var errs []error
	if math.IsNaN(o.Threshold) || o.Threshold < 0 || o.Threshold > 1 {
		errs = append(errs, fmt.Errorf("threshold %v, want in [0, 1]", o.Threshold))
	}
	if math.IsNaN(o.StarThreshold) || o.StarThreshold < 0 || o.StarThreshold > 1 {
		errs = append(errs, fmt.Errorf("star threshold %v, want in [0, 1]", o.StarThreshold))
	}
	if o.Keep < KeepFirst || o.Keep > KeepNone {
		errs = append(errs, fmt.Errorf("unknown keep policy %d", o.Keep))
	}
	if o.Keep == KeepField && o.Field == "" {
		errs = append(errs, errors.New("KeepField needs a Field"))
	}
	if o.MaxSize < 0 {
		errs = append(errs, fmt.Errorf("max size %d", o.MaxSize))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrOptions, errors.Join(errs...))
}

// Cluster is a group of two or more near-duplicate documents.
type Cluster struct {
	// ID is the smallest member id; clusters are ordered by it.
	ID uint64 `json:"cluster"`
	// Kept is the member the keep policy keeps (the centre under Star).
	Kept uint64 `json:"kept"`
	// Members lists all member ids, Kept included, in increasing order.
	Members []uint64 `json:"members"`
	// Edges are the edges that joined the cluster, each with A < B, in
	// increasing (A, B) order: under Star the edges from the centre to each
	// other member; otherwise a maximum spanning tree of the component
	// (strongest links first in Kruskal order, ties by ids).
	Edges []Edge `json:"edges"`
	// Oversize is set when the cluster has more than Options.MaxSize
	// members.
	Oversize bool `json:"oversize,omitempty"`
	// KeptDropped is set under KeepNone: Kept, the representative, is
	// dropped with the other members (unless it is Pinned).
	KeptDropped bool `json:"kept_dropped,omitempty"`
}

// MarshalJSON writes an edge as {"a":..,"b":..,"similarity":..}.
func (e Edge) MarshalJSON() ([]byte, error) {
	b := []byte(`{"a":`)
	b = strconv.AppendUint(b, e.A, 10)
	b = append(b, `,"b":`...)
	b = strconv.AppendUint(b, e.B, 10)
	b = append(b, `,"similarity":`...)
	b = strconv.AppendFloat(b, e.Similarity, 'g', -1, 64)
	return append(b, '}'), nil
}

// Result is the outcome of clustering.
type Result struct {
	// Clusters lists clusters of two or more members ordered by ID.
	Clusters []Cluster
	// Edges is the number of distinct accepted edges; Rejected counts edges
	// dropped for a similarity below Threshold (or NaN) and self-pairs.
	Edges, Rejected int
	// Oversize lists the IDs of clusters flagged Oversize.
	Oversize []uint64
}

// Duplicates returns the number of documents that are in a cluster but not
// kept: all members but Kept, and Kept too under KeepNone (KeptDropped).
func (r *Result) Duplicates() int {
	n := 0
	for _, c := range r.Clusters {
		n += len(c.Members) - 1
		if c.KeptDropped {
			n++
		}
	}
	return n
}

// WriteJSONL writes one JSON object per cluster and line, in order. The
// bytes are a function of the input set only.
func (r *Result) WriteJSONL(w io.Writer) error {
	enc := json.NewEncoder(w)
	for i := range r.Clusters {
		if err := enc.Encode(&r.Clusters[i]); err != nil {
			return err
		}
	}
	return nil
}

// Builder collects documents and verified edges, from any number of
// goroutines, and clusters them on Result. The zero value is not usable;
// make one with NewBuilder. Safe for concurrent use. Memory: 24 bytes per
// edge plus the documents' attributes. Adding costs O(1) amortized;
// Result costs O(E log E).
type Builder struct {
	opts  Options
	mu    sync.Mutex
	docs  map[uint64]Doc
	edges []Edge
}

// NewBuilder returns an empty builder.
func NewBuilder(o Options) (*Builder, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.StarThreshold == 0 {
		o.StarThreshold = o.Threshold
	}
	return &Builder{opts: o, docs: map[uint64]Doc{}}, nil
}

// AddDoc records a document's attributes. Adding the same ID again
// replaces them. Documents never joined by an edge appear in no cluster.
func (b *Builder) AddDoc(d Doc) {
	b.mu.Lock()
	b.docs[d.ID] = d
	b.mu.Unlock()
}

// AddEdge records a verified pair. Duplicated pairs count once, with their
// largest similarity.
func (b *Builder) AddEdge(e Edge) {
	b.mu.Lock()
	b.edges = append(b.edges, e)
	b.mu.Unlock()
}

// AddEdges records many verified pairs under one lock acquisition.
func (b *Builder) AddEdges(es []Edge) {
	b.mu.Lock()
	b.edges = append(b.edges, es...)
	b.mu.Unlock()
}

// Result clusters everything added so far. It may be called again after
// more additions.
func (b *Builder) Result() *Result {
	b.mu.Lock()
	edges := slices.Clone(b.edges)
	b.mu.Unlock()
	return b.cluster(edges)
}

// canonical edge order for the spanning forest: strongest first, then ids.
func strongerFirst(x, y Edge) int {
	if c := cmp.Compare(y.Similarity, x.Similarity); c != 0 {
		return c
	}
	if c := cmp.Compare(x.A, y.A); c != 0 {
		return c
	}
	return cmp.Compare(x.B, y.B)
}

func byPair(x, y Edge) int {
	if c := cmp.Compare(x.A, y.A); c != 0 {
		return c
	}
	return cmp.Compare(x.B, y.B)
}

func (b *Builder) cluster(edges []Edge) *Result {
	o := b.opts
	res := &Result{}
	// 1. canonical, filtered, deduplicated edges (max similarity per pair)
	n := 0
	for _, e := range edges {
		if e.A == e.B || math.IsNaN(e.Similarity) || e.Similarity < o.Threshold {
			res.Rejected++
			continue
		}
		if e.A > e.B {
			e.A, e.B = e.B, e.A
		}
		edges[n] = e
		n++
	}
	edges = edges[:n]
	slices.SortFunc(edges, func(x, y Edge) int {
		if c := byPair(x, y); c != 0 {
			return c
		}
		return cmp.Compare(y.Similarity, x.Similarity)
	})
	edges = slices.CompactFunc(edges, func(x, y Edge) bool { return x.A == y.A && x.B == y.B })
	res.Edges = len(edges)
	// 2. dense node numbering in id order
	nodes := make([]uint64, 0, 2*len(edges))
	for _, e := range edges {
		nodes = append(nodes, e.A, e.B)
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	index := func(id uint64) int32 {
		i, _ := slices.BinarySearch(nodes, id)
		return int32(i)
	}
	// 3. Kruskal in canonical order: components and maximum spanning forest
	slices.SortFunc(edges, strongerFirst)
	uf := NewUnionFind(len(nodes))
	tree := make([]bool, len(edges))
	for i, e := range edges {
		tree[i] = uf.Union(index(e.A), index(e.B))
	}
	comps := map[int32][]int32{}
	for i := range nodes {
		r := uf.Find(int32(i))
		comps[r] = append(comps[r], int32(i)) // increasing id order
	}
	b.mu.Lock()
	docOf := func(i int32) Doc {
		d, ok := b.docs[nodes[i]]
		if !ok {
			d = Doc{ID: nodes[i]}
		}
		return d
	}
	less := b.keepCompare()
	order := func(members []int32) []int32 {
		sorted := slices.Clone(members)
		slices.SortFunc(sorted, func(x, y int32) int { return less(docOf(x), docOf(y)) })
		return sorted
	}
	if !o.Star {
		treeEdges := map[int32][]Edge{}
		for i, e := range edges {
			if tree[i] {
				r := uf.Find(index(e.A))
				treeEdges[r] = append(treeEdges[r], e)
			}
		}
		for r, members := range comps {
			if len(members) < 2 {
				continue
			}
			c := Cluster{ID: nodes[members[0]], Kept: nodes[order(members)[0]], Edges: treeEdges[r]}
			for _, m := range members {
				c.Members = append(c.Members, nodes[m])
			}
			res.Clusters = append(res.Clusters, c)
		}
	} else {
		// adjacency restricted to edges at or above the star threshold
		adj := make([][]Edge, len(nodes))
		for _, e := range edges {
			if e.Similarity >= o.StarThreshold {
				ia, ib := index(e.A), index(e.B)
				adj[ia] = append(adj[ia], e)
				adj[ib] = append(adj[ib], e)
			}
		}
		assigned := make([]bool, len(nodes))
		for _, members := range comps {
			if len(members) < 2 {
				continue
			}
			for _, centre := range order(members) {
				if assigned[centre] {
					continue
				}
				assigned[centre] = true
				c := Cluster{Kept: nodes[centre], Members: []uint64{nodes[centre]}}
				for _, e := range adj[centre] {
					other := e.A
					if other == nodes[centre] {
						other = e.B
					}
					if j := index(other); !assigned[j] {
						assigned[j] = true
						c.Members = append(c.Members, other)
						c.Edges = append(c.Edges, e)
					}
				}
				if len(c.Members) < 2 {
					continue
				}
				slices.Sort(c.Members)
				c.ID = c.Members[0]
				res.Clusters = append(res.Clusters, c)
			}
		}
	}
	if o.Keep == KeepNone {
		for i := range res.Clusters {
			c := &res.Clusters[i]
			c.KeptDropped = !b.docs[c.Kept].Pinned
		}
	}
	b.mu.Unlock()
	slices.SortFunc(res.Clusters, func(x, y Cluster) int { return cmp.Compare(x.ID, y.ID) })
	for i := range res.Clusters {
		c := &res.Clusters[i]
		slices.SortFunc(c.Edges, byPair)
		if o.MaxSize > 0 && len(c.Members) > o.MaxSize {
			c.Oversize = true
			res.Oversize = append(res.Oversize, c.ID)
		}
	}
	return res
}

// keepCompare returns the order in which documents are preferred for
// keeping (negative: x is kept before y). It is a total order (ties by ID).
func (b *Builder) keepCompare() func(x, y Doc) int {
	policy := b.policyCompare()
	return func(x, y Doc) int {
		if x.Pinned != y.Pinned {
			if x.Pinned {
				return -1
			}
			return 1
		}
		return policy(x, y)
	}
}

// policyCompare is the keep policy's order, ignoring Pinned.
func (b *Builder) policyCompare() func(x, y Doc) int {
	o := b.opts
	first := func(x, y Doc) int {
		if c := cmp.Compare(x.Seq, y.Seq); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	}
	switch o.Keep {
	case KeepLongest:
		return func(x, y Doc) int {
			if c := cmp.Compare(y.Length, x.Length); c != 0 {
				return c
			}
			return first(x, y)
		}
	case KeepField:
		return func(x, y Doc) int {
			vx, okx := x.Attrs[o.Field]
			vy, oky := y.Attrs[o.Field]
			switch {
			case okx && !oky:
				return -1
			case !okx && oky:
				return 1
			case okx && oky:
				c := compareValues(vx, vy)
				if o.Descending {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return first(x, y)
		}
	default:
		return first
	}
}

// compareValues compares numerically when both parse as numbers, else as
// strings.
func compareValues(a, b string) int {
	fa, erra := strconv.ParseFloat(a, 64)
	fb, errb := strconv.ParseFloat(b, 64)
	if erra == nil && errb == nil && !math.IsNaN(fa) && !math.IsNaN(fb) {
		return cmp.Compare(fa, fb)
	}
	return cmp.Compare(a, b)
}

// verify checks the result's invariants: clusters ordered by ID and
// disjoint, members sorted and unique with ID the smallest and Kept among
// them, edges inside the cluster with A < B, sorted, at or above the
// threshold; under Star every edge touches the centre and is at or above
// StarThreshold, one per other member; otherwise the edges form a spanning
// tree (len(Members)−1 edges connecting all members).
func (r *Result) verify(o Options) error {
	if o.StarThreshold == 0 {
		o.StarThreshold = o.Threshold
	}
	seen := map[uint64]bool{}
	for i, c := range r.Clusters {
		if i > 0 && r.Clusters[i-1].ID >= c.ID {
			return fmt.Errorf("clusters out of order at %d", c.ID)
		}
		if len(c.Members) < 2 || c.Members[0] != c.ID || !slices.IsSorted(c.Members) {
			return fmt.Errorf("cluster %d: members %v", c.ID, c.Members)
		}
		if _, found := slices.BinarySearch(c.Members, c.Kept); !found {
			return fmt.Errorf("cluster %d: kept %d not a member", c.ID, c.Kept)
		}
		for j, m := range c.Members {
			if seen[m] || (j > 0 && c.Members[j-1] == m) {
				return fmt.Errorf("document %d in two clusters", m)
			}
			seen[m] = true
		}
		if len(c.Edges) != len(c.Members)-1 || !slices.IsSortedFunc(c.Edges, byPair) {
			return fmt.Errorf("cluster %d: %d edges for %d members", c.ID, len(c.Edges), len(c.Members))
		}
		uf := NewUnionFind(len(c.Members))
		for _, e := range c.Edges {
			ia, oka := slices.BinarySearch(c.Members, e.A)
			ib, okb := slices.BinarySearch(c.Members, e.B)
			if !oka || !okb || e.A >= e.B || e.Similarity < o.Threshold {
				return fmt.Errorf("cluster %d: bad edge %+v", c.ID, e)
			}
			if o.Star && (e.Similarity < o.StarThreshold || (e.A != c.Kept && e.B != c.Kept)) {
				return fmt.Errorf("cluster %d: star edge %+v misses centre %d", c.ID, e, c.Kept)
			}
			uf.Union(int32(ia), int32(ib))
		}
		if uf.Sets() != 1 {
			return fmt.Errorf("cluster %d: edges do not connect the members", c.ID)
		}
		if (o.MaxSize > 0 && len(c.Members) > o.MaxSize) != c.Oversize {
			return fmt.Errorf("cluster %d: oversize flag %v with %d members", c.ID, c.Oversize, len(c.Members))
		}
	}
	return nil
}
