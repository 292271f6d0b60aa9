package filesim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/internal/rng"
)

// family returns files built from a few base chunk lists: members of a
// family share most chunks with the family's base, families share none.
func family(seed uint64, families, perFamily int) [][]chunk.Ref {
	s := rng.New(rng.Key(seed))
	var files [][]chunk.Ref
	next := 0
	for f := 0; f < families; f++ {
		base := refs(1_000_000*(f+1), 100)
		for m := 0; m < perFamily; m++ {
			keep := 60 + int(s.Intn(41)) // 60..100 of the base's chunks
			file := append([]chunk.Ref{}, base[:keep]...)
			file = append(file, refs(next, 100-keep)...)
			next += 1000
			files = append(files, file)
		}
	}
	files = append(files, nil) // an empty file, never grouped
	return files
}

// TestGroupsAgainstScan checks Groups against a brute-force oracle: the
// connected components of every pair that a linear scan of the sketches
// makes a candidate (at least MinMatches equal positions) and whose exact
// chunk-Jaccard reaches the threshold.
func TestGroupsAgainstScan(t *testing.T) {
	for _, p := range []Params{RDC, Large} {
		for _, th := range []float64{0.3, 0.5, 0.8} {
			files := family(7, 6, 5)
			got, err := Groups(files, p, th)
			if err != nil {
				t.Fatal(err)
			}
			sk, _ := NewSketcher(p)
			sketches := make([]Sketch, len(files))
			for i, f := range files {
				sketches[i] = sk.Sketch(f)
			}
			// Oracle: union by a naive relabelling.
			label := make([]int, len(files))
			for i := range label {
				label[i] = i
			}
			var want []Link
			for i := range files {
				for j := i + 1; j < len(files); j++ {
					if len(sketches[i].Values) == 0 || len(sketches[j].Values) == 0 {
						continue
					}
					est, m, _ := Estimate(sketches[i], sketches[j])
					if m < MinMatches(p, th) {
						continue
					}
					if e := ExactJaccard(files[i], files[j]); e >= th {
						want = append(want, Link{A: i, B: j, Estimate: est, Exact: e})
						from, to := label[j], label[i]
						for k := range label {
							if label[k] == from {
								label[k] = to
							}
						}
					}
				}
			}
			comps := map[int][]int{}
			var order []int
			for i, l := range label {
				if _, ok := comps[l]; !ok {
					order = append(order, l)
				}
				comps[l] = append(comps[l], i)
			}
			var wantGroups [][]int
			for _, l := range order {
				if len(comps[l]) > 1 {
					wantGroups = append(wantGroups, comps[l])
				}
			}
			var gotGroups [][]int
			var gotLinks []Link
			for _, g := range got {
				if !slices.IsSorted(g.Members) {
					t.Errorf("members not sorted: %v", g.Members)
				}
				gotGroups = append(gotGroups, g.Members)
				for _, l := range g.Links {
					if !slices.Contains(g.Members, l.A) || !slices.Contains(g.Members, l.B) {
						t.Errorf("link %+v outside its group %v", l, g.Members)
					}
				}
				gotLinks = append(gotLinks, g.Links...)
			}
			slices.SortFunc(gotLinks, func(x, y Link) int {
				if x.A != y.A {
					return x.A - y.A
				}
				return x.B - y.B
			})
			if fmt.Sprint(gotGroups) != fmt.Sprint(wantGroups) {
				t.Errorf("%+v t=%v: groups %v, scan %v", p, th, gotGroups, wantGroups)
			}
			if fmt.Sprint(gotLinks) != fmt.Sprint(want) {
				t.Errorf("%+v t=%v: links %v, scan %v", p, th, gotLinks, want)
			}
			if th == 0.3 && len(got) != 6 {
				t.Errorf("%+v: %d groups at 0.3, want the 6 families", p, len(got))
			}
		}
	}
}

func TestGroupsThreshold(t *testing.T) {
	for _, th := range []float64{0, -1, 1.5} {
		if _, err := Groups(nil, RDC, th); err == nil {
			t.Errorf("threshold %v accepted", th)
		}
	}
}

// TestSimilarScores: Similar ranks by exact score, drops candidates that
// share no chunk, and agrees with a scan of ExactJaccard for the files it
// returns.
func TestSimilarScores(t *testing.T) {
	files := family(9, 4, 4)
	q := files[0]
	got, err := Similar(q, files[1:], RDC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("nothing similar")
	}
	for i, s := range got {
		if e := ExactJaccard(q, files[1+s.ID]); e != s.Score || e == 0 {
			t.Errorf("%+v: exact %v", s, e)
		}
		if i > 0 && got[i-1].Score < s.Score {
			t.Errorf("not ranked: %v", got)
		}
	}
	// The members of q's family (files 1..3) share chunks; the rest none.
	for _, s := range got {
		if s.ID >= 3 {
			t.Errorf("unrelated file %d returned: %+v", s.ID, s)
		}
	}
	top, _ := Similar(q, files[1:], RDC, 1)
	if len(top) != 1 || top[0] != got[0] {
		t.Errorf("top 1: %v, want %v", top, got[:1])
	}
}

func ExampleGroups() {
	a, b := pair(1, 90) // 90 of 100 chunks shared: J = 90/110
	c, _ := pair(2, 0)  // unrelated
	groups, _ := Groups([][]chunk.Ref{a, c, b}, RDC, 0.5)
	for _, g := range groups {
		for _, l := range g.Links {
			fmt.Printf("%v: %d ~ %d exact %.2f\n", g.Members, l.A, l.B, l.Exact)
		}
	}
	// Output: [0 2]: 0 ~ 2 exact 0.82
}

func ExampleSimilar() {
	a, b := pair(1, 90)
	c, _ := pair(2, 0)
	ms, _ := Similar(a, [][]chunk.Ref{c, b}, Large, 5)
	for _, m := range ms {
		fmt.Printf("file %d score %.2f\n", m.ID, m.Score)
	}
	// Output: file 1 score 0.82
}
