package sample

import (
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestAnyByteLE checks the eight-lane compare against a byte loop, on
// random words and on words built from the edge bytes 0, 1, 254, 255.
func TestAnyByteLE(t *testing.T) {
	slow := func(w, b uint64) bool {
		for j := 0; j < 64; j += 8 {
			if w>>j&0xff <= b>>j&0xff {
				return true
			}
		}
		return false
	}
	st := rng.New(3)
	edge := []uint64{0, 1, 254, 255}
	for range 200000 {
		w, b := st.Uint64(), st.Uint64()
		if st.Intn(2) == 0 {
			w, b = 0, 0
			for j := 0; j < 64; j += 8 {
				w |= edge[st.Intn(4)] << j
				b |= edge[st.Intn(4)] << j
			}
		}
		if got, want := anyByteLE(w, b), slow(w, b); got != want {
			t.Fatalf("anyByteLE(%#x, %#x) = %v, want %v", w, b, got, want)
		}
	}
}
