package lsh

import (
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// Key(c) must equal the c-th key of Keys for every preset and shape.
func TestKeyEqualsKeys(t *testing.T) {
	st := rng.New(1)
	for _, p := range []Params{Banding(4, 8), AltaVista(), Bing(), {R: 3, B: 5, M: 3, KeyBits: 32}} {
		s := MustNew(p)
		samples := make([]uint64, p.K()+3)
		for i := range samples {
			samples[i] = st.Uint64()
		}
		keys, err := s.Keys(nil, samples)
		if err != nil {
			t.Fatal(err)
		}
		for c, k := range keys {
			if got := s.Key(c, samples); got != k {
				t.Fatalf("%v: Key(%d) = %#x, Keys()[%d] = %#x", p, c, got, c, k)
			}
		}
	}
}
