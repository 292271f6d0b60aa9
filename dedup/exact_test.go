package dedup

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestFirstCopies checks firstCopies against the first occurrence of each
// fingerprint found by a scan in order, on documents whose fingerprints
// repeat often (drawn from a small range) and on none.
func TestFirstCopies(t *testing.T) {
	s := rng.New(rng.Key(3))
	for _, n := range []int{0, 1, 2, 1000} {
		for _, distinct := range []uint64{1, 7, 1 << 62} {
			docs := make([]Doc, n)
			for i := range docs {
				docs[i].Fingerprint = s.Uint64() % distinct
			}
			first, firsts := firstCopies(docs)
			seen := map[uint64]int{}
			var want []int
			for i := range docs {
				j, ok := seen[docs[i].Fingerprint]
				if !ok {
					j = i
					seen[docs[i].Fingerprint] = i
					want = append(want, i)
				}
				if first[i] != j {
					t.Fatalf("n=%d distinct=%d: first[%d] = %d, want %d", n, distinct, i, first[i], j)
				}
			}
			if !slices.Equal(firsts, want) {
				t.Fatalf("n=%d distinct=%d: firsts %v, want %v", n, distinct, firsts, want)
			}
		}
	}
}
