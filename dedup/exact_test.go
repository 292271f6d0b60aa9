package dedup

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/internal/rng"
)

// TestFirstCopies checks firstCopies against the first occurrence of each
// whole fingerprint found by a scan in order, on documents whose
// fingerprints repeat often (drawn from a small range) and on none. With
// split, fingerprints that agree in their first 64 bits differ in the
// rest or in the length, as a forged or chance collision of the first half
// would: such documents must not be taken for copies, and each one that
// fails the confirmation is counted.
func TestFirstCopies(t *testing.T) {
	s := rng.New(rng.Key(3))
	for _, n := range []int{0, 1, 2, 1000} {
		for _, distinct := range []uint64{1, 7, 1 << 62} {
			for _, split := range []bool{false, true} {
				docs := make([]Doc, n)
				for i := range docs {
					v := s.Uint64() % distinct
					docs[i].Fingerprint = identity.Fingerprint{Hi: v, Lo: rng.Mix64(v), Len: v % 5}
					if split {
						docs[i].Fingerprint.Lo ^= s.Uint64() % 2
						docs[i].Fingerprint.Len += s.Uint64() % 2
					}
				}
				first, firsts, unconfirmed := firstCopies(docs)
				seen := map[identity.Fingerprint]int{}
				his := map[uint64]int{} // classes per first half
				var want []int
				for i := range docs {
					j, ok := seen[docs[i].Fingerprint]
					if !ok {
						j = i
						seen[docs[i].Fingerprint] = i
						his[docs[i].Fingerprint.Hi]++
						want = append(want, i)
					}
					if first[i] != j {
						t.Fatalf("n=%d distinct=%d split=%v: first[%d] = %d, want %d", n, distinct, split, i, first[i], j)
					}
				}
				if !slices.Equal(firsts, want) {
					t.Fatalf("n=%d distinct=%d split=%v: firsts %v, want %v", n, distinct, split, firsts, want)
				}
				var wantUnconfirmed int64
				for _, c := range his {
					wantUnconfirmed += int64(c - 1)
				}
				if unconfirmed != wantUnconfirmed || (!split && unconfirmed != 0) || (split && n == 1000 && distinct == 1 && unconfirmed != 3) {
					t.Fatalf("n=%d distinct=%d split=%v: %d unconfirmed, want %d", n, distinct, split, unconfirmed, wantUnconfirmed)
				}
			}
		}
	}
}
