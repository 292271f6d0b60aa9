package store

import (
	"cmp"
	"slices"
)

// sortEntries orders merge entries by id, newest operation first.
func sortEntries(es []mergeEntry) {
	slices.SortFunc(es, func(a, b mergeEntry) int {
		if c := cmp.Compare(a.id, b.id); c != 0 {
			return c
		}
		return cmp.Compare(a.rank, b.rank)
	})
}
