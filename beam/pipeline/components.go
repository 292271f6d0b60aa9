package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Connected components by the alternation of large-star and small-star
// (Kiveris, Lattanzi, Mirrokni, Rastogi and Vassilvitskii, "Connected
// Components in MapReduce and Beyond", SoCC 2014, section 3). Nodes are
// document numbers (Order), so the minimum of a component is its earliest
// document, the one dedup's keep-first policy keeps.
//
// Both operations work on a set of undirected edges and keep the
// components unchanged:
//
//   - large-star: every node u links each neighbour v > u to m(u), the
//     smallest of u and its neighbours;
//   - small-star: every node u links itself and each neighbour v <= u to
//     m, the smallest of them.
//
// At the fixed point every component is a star whose centre is its
// minimum: each other node has exactly one edge, to the centre. The paper
// proves O(log² n) rounds; on near-duplicate graphs (small, dense
// clusters) and on paths of millions of nodes a few rounds suffice
// (TestComponentsRounds). A Beam graph cannot loop, so Rounds rounds are
// unrolled into the pipeline and a final check verifies the fixed point:
// a graph that has not converged fails the pipeline with an error naming
// the rounds, never a wrong clustering.

// largeStar appends the large-star edges of node u with neighbours nb
// (sorted, distinct) to dst.
func largeStar(dst [][2]uint64, u uint64, nb []uint64) [][2]uint64 {
	if len(nb) == 0 {
		return dst
	}
	m := min(u, nb[0])
	for _, v := range nb {
		if v > u {
			dst = append(dst, [2]uint64{v, m})
		}
	}
	return dst
}

// smallStar appends the small-star edges of node u with neighbours nb
// (sorted, distinct, all < u) to dst.
func smallStar(dst [][2]uint64, u uint64, nb []uint64) [][2]uint64 {
	if len(nb) == 0 {
		return dst
	}
	m := nb[0]
	for _, v := range nb[1:] {
		dst = append(dst, [2]uint64{v, m})
	}
	return append(dst, [2]uint64{u, m})
}

// collect reads an iterator of node numbers into buf[:0], sorted and
// without repeats (edges may arrive more than once).
func collect(buf []uint64, iter func(*uint64) bool) []uint64 {
	buf = buf[:0]
	var v uint64
	for iter(&v) {
		buf = append(buf, v)
	}
	slices.Sort(buf)
	return slices.Compact(buf)
}

func init() {
	register.Function3x0(bothWaysFn)
	register.Function3x0(orientFn)
	register.DoFn3x0[uint64, func(*uint64) bool, func(uint64, uint64)](&largeStarFn{})
	register.DoFn3x0[uint64, func(*uint64) bool, func(uint64, uint64)](&smallStarFn{})
	register.DoFn5x1[context.Context, uint64, func(*uint64) bool, func(*uint64) bool, func(uint64, uint64), error](&starCheckFn{})
	register.Emitter2[uint64, uint64]()
	register.Iter1[uint64]()
}

// bothWaysFn emits an edge in both directions (self-loops dropped).
func bothWaysFn(u, v uint64, emit func(uint64, uint64)) {
	if u != v {
		emit(u, v)
		emit(v, u)
	}
}

// orientFn keys an edge by its larger end (self-loops dropped).
func orientFn(u, v uint64, emit func(uint64, uint64)) {
	switch {
	case v < u:
		emit(u, v)
	case u < v:
		emit(v, u)
	}
}

type largeStarFn struct {
	nb  []uint64
	out [][2]uint64
}

func (f *largeStarFn) ProcessElement(u uint64, iter func(*uint64) bool, emit func(uint64, uint64)) {
	f.nb = collect(f.nb, iter)
	f.out = largeStar(f.out[:0], u, f.nb)
	for _, e := range f.out {
		emit(e[0], e[1])
	}
}

type smallStarFn struct {
	nb  []uint64
	out [][2]uint64
}

func (f *smallStarFn) ProcessElement(u uint64, iter func(*uint64) bool, emit func(uint64, uint64)) {
	f.nb = collect(f.nb, iter)
	f.out = smallStar(f.out[:0], u, f.nb)
	for _, e := range f.out {
		emit(e[0], e[1])
	}
}

// starCheckFn verifies the fixed point at one node and emits its
// assignment (node, root): a node with one parent and no children is a
// leaf of its parent's star; a node with children and no parent is a
// centre, its own root. Anything else means the rounds did not converge.
type starCheckFn struct {
	Rounds  int
	parents []uint64
}

func (f *starCheckFn) ProcessElement(ctx context.Context, x uint64, parents, children func(*uint64) bool, emit func(uint64, uint64)) error {
	f.parents = collect(f.parents, parents)
	var c uint64
	hasChildren := children(&c)
	switch {
	case len(f.parents) == 0 && hasChildren:
		emit(x, x)
	case len(f.parents) == 1 && !hasChildren:
		emit(x, f.parents[0])
	case len(f.parents) > 0:
		return fmt.Errorf("neardup-beam: connected components did not converge in %d rounds (node %#x has %d parents, children %v); raise --cc-rounds", f.Rounds, x, len(f.parents), hasChildren)
	}
	return nil
}

// Components labels the nodes of an undirected graph, given as a
// PCollection<KV<uint64, uint64>> of edges, by the smallest node of their
// component: it returns PCollection<KV<uint64, uint64>> with one (node,
// root) for every node that has an edge, roots included (root, root).
// rounds large-star/small-star rounds are unrolled; if they do not reach
// the fixed point the pipeline fails.
func Components(s beam.Scope, edges beam.PCollection, rounds int) beam.PCollection {
	return components(s, edges, rounds, meter{})
}

// components is Components, its shuffles measured by m.
func components(s beam.Scope, edges beam.PCollection, rounds int, m meter) beam.PCollection {
	s = s.Scope("Components")
	for r := 0; r < rounds; r++ {
		rs := s.Scope(fmt.Sprintf("Round%d", r+1))
		g := m.gbk(rs, "components", beam.ParDo(rs, bothWaysFn, edges))
		edges = beam.ParDo(rs, &largeStarFn{}, g)
		g = m.gbk(rs, "components", beam.ParDo(rs, orientFn, edges))
		edges = beam.ParDo(rs, &smallStarFn{}, g)
	}
	// After small-star every edge is (child, parent) with parent < child.
	asChild := edges
	asParent := beam.SwapKV(s, edges)
	return beam.ParDo(s, &starCheckFn{Rounds: rounds}, m.cogbk(s, "components", asChild, asParent))
}

// DefaultRounds is the default number of large-star/small-star rounds.
// The slowest shape measured is a path whose labels run in order along it
// (a chain of revisions read in order): it takes about log2(n) + 1 rounds
// (17 for 100,000 nodes; a shuffled path 13), so 32 rounds cover any
// component of up to 2^31 documents. Rounds after convergence only pass the
// stars through (one edge per clustered document).
const DefaultRounds = 32
