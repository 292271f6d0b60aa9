package lsh

import (
	"errors"
	"fmt"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestExplainAgainstKeys: over random pairs with chosen bands disturbed,
// Explain's shared keys are exactly the positions where Keys agree, its
// bands agree exactly where the undisturbed bands are, a shared key
// combines only matching bands, and the pair is a candidate exactly when at
// least M bands match.
func TestExplainAgainstKeys(t *testing.T) {
	s := rng.New(rng.Key(11))
	for _, p := range []Params{AltaVista(), Bing(), Banding(4, 8), {R: 3, B: 7, M: 3, Seed: 5}} {
		sc := MustNew(p)
		for trial := 0; trial < 200; trial++ {
			a := make([]uint64, p.K()+int(s.Intn(3)))
			for i := range a {
				a[i] = s.Uint64()
			}
			b := append([]uint64(nil), a...)
			disturbed := map[int]bool{}
			for i := 0; i < p.B; i++ {
				if s.Intn(2) == 0 {
					b[i*p.R+int(s.Intn(uint64(p.R)))] ^= 1 + s.Uint64()>>1
					disturbed[i] = true
				}
			}
			e, err := sc.Explain(a, b)
			if err != nil {
				t.Fatal(err)
			}
			ka, _ := sc.Keys(nil, a)
			kb, _ := sc.Keys(nil, b)
			var want []int
			for c := range ka {
				if ka[c] == kb[c] {
					want = append(want, c)
				}
			}
			var got []int
			for _, k := range e.Keys {
				got = append(got, k.Index)
				if k.Value != ka[k.Index] {
					t.Fatalf("key %d value %x, Keys says %x", k.Index, k.Value, ka[k.Index])
				}
				for _, bd := range k.Bands {
					if !e.Bands[bd].Match {
						t.Fatalf("%v: shared key %d combines non-matching band %d", p, k.Index, bd)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%v: shared keys %v, Keys agree at %v", p, got, want)
			}
			matches := 0
			for i, bd := range e.Bands {
				wantAgree := p.R
				if disturbed[i] {
					wantAgree = p.R - 1
				}
				if bd.Match == disturbed[i] || bd.Agreeing != wantAgree || bd.Lo != i*p.R || bd.Hi != (i+1)*p.R {
					t.Fatalf("%v band %d: %+v (disturbed %v)", p, i, bd, disturbed[i])
				}
				if bd.Match {
					matches++
				}
			}
			if e.Agreements != matches || e.Candidate() != (matches >= p.M) {
				t.Fatalf("%v: agreements %d of %d matching, candidate %v", p, e.Agreements, matches, e.Candidate())
			}
		}
	}
}

func TestExplainEdges(t *testing.T) {
	sc := MustNew(AltaVista())
	if e, err := sc.Explain(nil, make([]uint64, 84)); err != nil || len(e.Bands) != 0 || e.Candidate() {
		t.Errorf("empty sketch: %+v %v", e, err)
	}
	if _, err := sc.Explain(make([]uint64, 10), make([]uint64, 84)); !errors.Is(err, ErrShortSketch) {
		t.Errorf("short sketch: %v", err)
	}
}
