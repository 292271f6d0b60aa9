package store

import (
	"cmp"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestSortPostings checks the radix sort against a stable comparison
// sort, on postings whose keys and ids vary in all their bytes, in few of
// them, or not at all, with repeated pairs whose order must be kept.
func TestSortPostings(t *testing.T) {
	st := rng.New(14)
	for _, c := range []struct {
		name    string
		key, id func() uint64
	}{
		{"random", st.Uint64, st.Uint64},
		{"repeated", func() uint64 { return st.Uint64() & 0xff00_0000_0000_00ff }, func() uint64 { return st.Intn(3) << 60 }},
		{"small", func() uint64 { return st.Intn(50) }, func() uint64 { return st.Intn(400) }},
		{"equal", func() uint64 { return 7 }, func() uint64 { return 9 }},
	} {
		for _, n := range []int{0, 1, 2, 1000} {
			ps := make([]bulkPosting, n)
			for i := range ps {
				// del marks the order of the writes: a stable sort keeps
				// it among equal pairs.
				ps[i] = bulkPosting{key: c.key(), id: c.id(), del: i%2 == 1}
			}
			type indexed struct {
				p bulkPosting
				i int
			}
			want := make([]indexed, n)
			for i, p := range ps {
				want[i] = indexed{p, i}
			}
			slices.SortStableFunc(want, func(a, b indexed) int {
				if c := cmp.Compare(a.p.key, b.p.key); c != 0 {
					return c
				}
				return cmp.Compare(a.p.id, b.p.id)
			})
			got, _ := sortPostings(slices.Clone(ps), nil, false)
			for i := range want {
				if got[i] != want[i].p {
					t.Fatalf("%s, %d postings: at %d got %+v, want %+v", c.name, n, i, got[i], want[i].p)
				}
			}
			// With the ids in the order of the writes, by key only.
			slices.SortStableFunc(ps, func(a, b bulkPosting) int { return cmp.Compare(a.id, b.id) })
			slices.SortStableFunc(want, func(a, b indexed) int { return cmp.Compare(a.p.id, b.p.id) })
			slices.SortStableFunc(want, func(a, b indexed) int { return cmp.Compare(a.p.key, b.p.key) })
			got, _ = sortPostings(ps, nil, true)
			for i := range want {
				if got[i] != want[i].p {
					t.Fatalf("%s, %d postings, ids in order: at %d got %+v, want %+v", c.name, n, i, got[i], want[i].p)
				}
			}
		}
	}
}
