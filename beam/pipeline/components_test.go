package pipeline

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// simulate runs large-star/small-star rounds in memory on edges, grouping
// as the Beam graph does, until the star check holds or maxRounds is
// reached. It returns the (node, root) assignments and the rounds taken
// (-1 if not converged).
func simulate(edges [][2]uint64, maxRounds int) (map[uint64]uint64, int) {
	group := func(es [][2]uint64) map[uint64][]uint64 {
		g := map[uint64][]uint64{}
		for _, e := range es {
			g[e[0]] = append(g[e[0]], e[1])
		}
		return g
	}
	step := func(es [][2]uint64, fn func([][2]uint64, uint64, []uint64) [][2]uint64) [][2]uint64 {
		var out [][2]uint64
		g := group(es)
		keys := make([]uint64, 0, len(g))
		for k := range g {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, u := range keys {
			nb := slices.Clone(g[u])
			slices.Sort(nb)
			out = fn(out, u, slices.Compact(nb))
		}
		return out
	}
	for r := 1; r <= maxRounds; r++ {
		var both [][2]uint64
		for _, e := range edges {
			if e[0] != e[1] {
				both = append(both, e, [2]uint64{e[1], e[0]})
			}
		}
		edges = step(both, largeStar)
		var oriented [][2]uint64
		for _, e := range edges {
			switch {
			case e[1] < e[0]:
				oriented = append(oriented, e)
			case e[0] < e[1]:
				oriented = append(oriented, [2]uint64{e[1], e[0]})
			}
		}
		edges = step(oriented, smallStar)
		if a, ok := starCheck(edges); ok {
			return a, r
		}
	}
	return nil, -1
}

// starCheck is starCheckFn over a whole edge list.
func starCheck(edges [][2]uint64) (map[uint64]uint64, bool) {
	parents := map[uint64][]uint64{}
	hasChildren := map[uint64]bool{}
	for _, e := range edges {
		parents[e[0]] = append(parents[e[0]], e[1])
		hasChildren[e[1]] = true
	}
	a := map[uint64]uint64{}
	for x, ps := range parents {
		slices.Sort(ps)
		ps = slices.Compact(ps)
		if len(ps) != 1 || hasChildren[x] {
			return nil, false
		}
		a[x] = ps[0]
	}
	for x := range hasChildren {
		if _, ok := parents[x]; !ok {
			a[x] = x
		}
	}
	return a, true
}

// oracle labels nodes by the minimum of their component (union-find).
func oracle(edges [][2]uint64) map[uint64]uint64 {
	parent := map[uint64]uint64{}
	var find func(x uint64) uint64
	find = func(x uint64) uint64 {
		p, ok := parent[x]
		if !ok {
			parent[x] = x
			return x
		}
		if p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	for _, e := range edges {
		if e[0] == e[1] {
			continue
		}
		a, b := find(e[0]), find(e[1])
		if a > b {
			a, b = b, a
		}
		parent[b] = a
	}
	out := map[uint64]uint64{}
	for x := range parent {
		out[x] = find(x)
	}
	return out
}

func checkComponents(t *testing.T, name string, edges [][2]uint64, maxRounds int) int {
	t.Helper()
	got, rounds := simulate(edges, maxRounds)
	if rounds < 0 {
		t.Fatalf("%s: no fixed point in %d rounds", name, maxRounds)
	}
	want := oracle(edges)
	var in []testEdge
	for _, e := range edges {
		in = append(in, testEdge{e[0], e[1]})
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d nodes labelled, want %d", name, len(got), len(want))
	}
	for x, r := range want {
		if got[x] != r {
			t.Fatalf("%s: node %d labelled %d, want %d", name, x, got[x], r)
		}
	}
	return rounds
}

// TestComponentsOracle checks the rounds against union-find on random
// graphs of every density, on paths and stars in shuffled labelings.
func TestComponentsOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(60)
		m := r.IntN(3 * n)
		var edges [][2]uint64
		for i := 0; i < m; i++ {
			edges = append(edges, [2]uint64{uint64(r.IntN(n)), uint64(r.IntN(n))})
		}
		checkComponents(t, "random", edges, DefaultRounds)
	}
	for _, n := range []int{2, 3, 10, 1000} {
		perm := r.Perm(n)
		var path, star [][2]uint64
		for i := 1; i < n; i++ {
			path = append(path, [2]uint64{uint64(perm[i-1]), uint64(perm[i])})
			star = append(star, [2]uint64{uint64(perm[0]), uint64(perm[i])})
		}
		checkComponents(t, "path", path, DefaultRounds)
		checkComponents(t, "star", star, DefaultRounds)
	}
}

// TestComponentsRounds measures the rounds to the fixed point on the
// hardest shapes we know for this algorithm: long paths with shuffled and
// with sorted labels. DefaultRounds must cover them with room to spare.
func TestComponentsRounds(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 10000
	}
	r := rand.New(rand.NewPCG(3, 4))
	perm := r.Perm(n)
	var shuffled, sorted, reversed [][2]uint64
	for i := 1; i < n; i++ {
		shuffled = append(shuffled, [2]uint64{uint64(perm[i-1]), uint64(perm[i])})
		sorted = append(sorted, [2]uint64{uint64(i - 1), uint64(i)})
		reversed = append(reversed, [2]uint64{uint64(n - i), uint64(n - i - 1)})
	}
	for _, c := range []struct {
		name  string
		edges [][2]uint64
	}{{"shuffled path", shuffled}, {"sorted path", sorted}, {"reversed path", reversed}} {
		rounds := checkComponents(t, c.name, c.edges, 64)
		t.Logf("%s of %d nodes: %d rounds", c.name, n, rounds)
		if rounds > DefaultRounds {
			t.Errorf("%s of %d nodes needs %d rounds > DefaultRounds %d", c.name, n, rounds, DefaultRounds)
		}
	}
}

// testEdge carries an edge into a test pipeline (Beam cannot encode arrays).
type testEdge struct{ A, B uint64 }

func init() {
	beam.RegisterType(reflect.TypeOf(testEdge{}))
	register.Function2x0(edgeOfPairFn)
}

func edgeOfPairFn(e testEdge, emit func(uint64, uint64)) { emit(e.A, e.B) }

// TestComponentsPrism runs Components on Prism over a shuffled path, a
// sorted path and random edges, and compares with union-find; with one
// round the sorted path cannot converge, and the pipeline must fail with
// an error that says so.
func TestComponentsPrism(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var edges [][2]uint64
	perm := r.Perm(300)
	for i := 1; i < len(perm); i++ {
		edges = append(edges, [2]uint64{uint64(perm[i-1]), uint64(perm[i])})
	}
	for i := 1; i < 200; i++ {
		edges = append(edges, [2]uint64{uint64(1000 + i - 1), uint64(1000 + i)})
	}
	for i := 0; i < 300; i++ {
		edges = append(edges, [2]uint64{uint64(2000 + r.IntN(400)), uint64(2000 + r.IntN(400))})
	}
	want := oracle(edges)
	var in []testEdge
	for _, e := range edges {
		in = append(in, testEdge{e[0], e[1]})
	}
	var wantKV []string
	for x, root := range want {
		wantKV = append(wantKV, fmt.Sprintf("%d %d", x, root))
	}
	p, s := beam.NewPipelineWithRoot()
	roots := Components(s, beam.ParDo(s, edgeOfPairFn, beam.CreateList(s, in)), DefaultRounds)
	passert.Equals(s, beam.ParDo(s, formatKVFn, roots), beam.CreateList(s, wantKV))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}

	p, s = beam.NewPipelineWithRoot()
	Components(s, beam.ParDo(s, edgeOfPairFn, beam.CreateList(s, in)), 1)
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "did not converge in 1 rounds") {
		t.Fatalf("one round on a path of 200: err = %v, want a convergence error", err)
	}
}

func formatKVFn(x, root uint64) string { return fmt.Sprintf("%d %d", x, root) }

func init() { register.Function2x1(formatKVFn) }
