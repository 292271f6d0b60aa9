package cluster

import "fmt"

// UnionFind is a disjoint-set forest over the dense elements 0..n-1, with
// union by size and path halving: Find and Union cost O(α(n)) amortized.
// The zero value is an empty forest; grow it with Add. Not safe for
// concurrent use. The partition it represents does not depend on the order
// of Union calls (only the internal tree shape does).
type UnionFind struct {
	parent []int32
	size   []int32
	sets   int
}

// NewUnionFind returns a forest of n singleton sets.
func NewUnionFind(n int) *UnionFind {
	u := &UnionFind{}
	for range n {
		u.Add()
	}
	return u
}

// Add appends a new singleton element and returns it.
func (u *UnionFind) Add() int32 {
	x := int32(len(u.parent))
	u.parent = append(u.parent, x)
	u.size = append(u.size, 1)
	u.sets++
	return x
}

// Len returns the number of elements; Sets the number of disjoint sets.
func (u *UnionFind) Len() int  { return len(u.parent) }
func (u *UnionFind) Sets() int { return u.sets }

// Find returns the representative of x's set.
func (u *UnionFind) Find(x int32) int32 {
	p := u.parent
	for p[x] != x {
		p[x] = p[p[x]] // path halving
		x = p[x]
	}
	return x
}

// Union merges the sets of a and b and reports whether they were distinct.
func (u *UnionFind) Union(a, b int32) bool {
	ra, rb := u.Find(a), u.Find(b)
	if ra == rb {
		return false
	}
	if u.size[ra] < u.size[rb] || (u.size[ra] == u.size[rb] && rb < ra) {
		ra, rb = rb, ra
	}
	u.parent[rb] = ra
	u.size[ra] += u.size[rb]
	u.sets--
	return true
}

// Size returns the number of elements in x's set.
func (u *UnionFind) Size(x int32) int { return int(u.size[u.Find(x)]) }

// verify checks the forest's invariants: parents in range, every chain
// ends at a root without cycles, root sizes equal their member counts and
// add up to Len, and Sets equals the number of roots.
func (u *UnionFind) verify() error {
	n := len(u.parent)
	if len(u.size) != n {
		return fmt.Errorf("size has %d entries, parent %d", len(u.size), n)
	}
	count := make([]int32, n)
	roots := 0
	for x := range n {
		r, steps := int32(x), 0
		for u.parent[r] != r {
			if u.parent[r] < 0 || int(u.parent[r]) >= n {
				return fmt.Errorf("parent[%d] = %d out of range", r, u.parent[r])
			}
			r = u.parent[r]
			if steps++; steps > n {
				return fmt.Errorf("cycle through %d", x)
			}
		}
		count[r]++
		if int32(x) == r {
			roots++
		}
	}
	total := 0
	for x := range n {
		if u.parent[x] == int32(x) {
			if u.size[x] != count[x] {
				return fmt.Errorf("root %d has size %d, %d members", x, u.size[x], count[x])
			}
			total += int(count[x])
		}
	}
	if total != n || roots != u.sets {
		return fmt.Errorf("roots %d (Sets %d) cover %d of %d elements", roots, u.sets, total, n)
	}
	return nil
}
