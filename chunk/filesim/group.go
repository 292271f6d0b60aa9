package filesim

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/cluster"
)

// Link is a pair of files confirmed similar by Groups, with both figures.
type Link struct {
	// A and B are the files' positions in the list given to Groups, A < B.
	A, B int
	// Estimate is the sketch estimate that made the pair a candidate.
	Estimate float64
	// Exact is the exact chunk-Jaccard (ExactJaccard), at least the
	// threshold.
	Exact float64
}

// Group is a connected component of confirmed links: files joined by a
// chain of pairs each at or above the threshold (the files of a group are
// not all pairwise similar).
type Group struct {
	// Members are the files' positions, in increasing order.
	Members []int
	// Links are the confirmed pairs within the group, ordered by (A, B).
	Links []Link
}

// MinMatches returns the number of matching sample positions a candidate
// needs for a file-similarity threshold: K·threshold/2, at least 1. A pair
// at the threshold matches in about K·threshold positions, so half of that
// keeps almost every true pair while chance agreements (1 in 2^Bits per
// position) rarely reach it.
func MinMatches(p Params, threshold float64) int {
	p = p.withDefaults()
	return max(1, int(math.Floor(float64(p.K)*threshold/2)))
}

// Groups finds the groups of similar files among files (each file given as
// its chunk list, package chunk): it sketches every file with p, indexes
// the sketches, takes as candidates the files that share at least
// MinMatches(p, threshold) sample positions with another, confirms each
// candidate pair by its exact chunk-Jaccard (at least threshold), and
// joins the confirmed pairs into connected components with a union-find
// forest (package cluster). This is the book's file-similarity search
// (section 6.2) run over a whole tree: the sketch proposes, the chunk lists
// decide.
//
// Groups are ordered by their first member. Files with no chunks (empty
// files) are never grouped. threshold must lie in (0, 1]. Cost: one sketch
// per file, a query per file proportional to the posting lists it reads,
// and an exact comparison (O(n log n), allocating) per candidate pair.
func Groups(files [][]chunk.Ref, p Params, threshold float64) ([]Group, error) {
	if !(threshold > 0 && threshold <= 1) {
		return nil, fmt.Errorf("%w: threshold %v not in (0, 1]", ErrParams, threshold)
	}
	sk, err := NewSketcher(p)
	if err != nil {
		return nil, err
	}
	p = sk.Params()
	ix := NewIndex(p)
	sketches := make([]Sketch, len(files))
	for i, f := range files {
		sketches[i] = sk.Sketch(f)
		if _, err := ix.Add(sketches[i]); err != nil {
			return nil, err
		}
	}
	minMatches := MinMatches(p, threshold)
	uf := cluster.NewUnionFind(len(files))
	var links []Link
	for i := range files {
		if len(sketches[i].Values) == 0 {
			continue
		}
		ms, err := ix.Query(sketches[i], minMatches, 0)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.ID <= i {
				continue
			}
			if exact := ExactJaccard(files[i], files[m.ID]); exact >= threshold {
				links = append(links, Link{A: i, B: m.ID, Estimate: m.J, Exact: exact})
				uf.Union(int32(i), int32(m.ID))
			}
		}
	}
	slices.SortFunc(links, func(x, y Link) int {
		if c := cmp.Compare(x.A, y.A); c != 0 {
			return c
		}
		return cmp.Compare(x.B, y.B)
	})
	byRoot := map[int32]int{} // root -> position in groups
	var groups []Group
	for i := range files {
		if uf.Size(int32(i)) < 2 {
			continue
		}
		r := uf.Find(int32(i))
		g, ok := byRoot[r]
		if !ok {
			g = len(groups)
			byRoot[r] = g
			groups = append(groups, Group{})
		}
		groups[g].Members = append(groups[g].Members, i)
	}
	for _, l := range links {
		g := byRoot[uf.Find(int32(l.A))]
		groups[g].Links = append(groups[g].Links, l)
	}
	return groups, nil
}

// Scored is a file found by Similar.
type Scored struct {
	// ID is the file's position in the list given to Similar.
	ID int
	// Matches is the number of sample positions its sketch shares with
	// the query's, and Estimate the Jaccard estimate from them.
	Matches  int
	Estimate float64
	// Score is the exact chunk-Jaccard with the query (ExactJaccard).
	Score float64
}

// Similar returns the files most similar to query, by exact chunk-Jaccard:
// every file whose sketch (made with p) shares at least one sample position
// with the query's is a candidate, scored by ExactJaccard; candidates that
// share no chunk at all (chance agreements of b-bit samples) are dropped,
// and the rest are returned best first (ties by position), at most top of
// them (all if top <= 0). Cost: one sketch per file and an exact
// comparison per candidate.
func Similar(query []chunk.Ref, files [][]chunk.Ref, p Params, top int) ([]Scored, error) {
	sk, err := NewSketcher(p)
	if err != nil {
		return nil, err
	}
	ix := NewIndex(sk.Params())
	for _, f := range files {
		if _, err := ix.Add(sk.Sketch(f)); err != nil {
			return nil, err
		}
	}
	ms, err := ix.Query(sk.Sketch(query), 1, 0)
	if err != nil {
		return nil, err
	}
	var out []Scored
	for _, m := range ms {
		if s := ExactJaccard(query, files[m.ID]); s > 0 {
			out = append(out, Scored{ID: m.ID, Matches: m.Matches, Estimate: m.J, Score: s})
		}
	}
	slices.SortFunc(out, func(x, y Scored) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	if top > 0 && len(out) > top {
		out = out[:top]
	}
	return out, nil
}
