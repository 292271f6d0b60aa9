package lsh

import (
	"errors"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestHammingIndexOracle checks every query against a linear scan, over
// sketch lengths that do and do not fill whole words, with planted near
// neighbours at every distance up to and beyond MaxDist.
func TestHammingIndexOracle(t *testing.T) {
	for _, c := range []struct{ bits, d int }{{64, 3}, {64, 0}, {100, 4}, {256, 7}, {37, 2}} {
		x, err := NewHammingIndex(c.bits, c.d, 3)
		if err != nil {
			t.Fatal(err)
		}
		words := (c.bits + 63) / 64
		st := rng.New(rng.Key(11, uint64(c.bits)))
		random := func() []uint64 {
			v := make([]uint64, words)
			for i := range v {
				v[i] = st.Uint64()
			}
			if r := c.bits % 64; r != 0 {
				v[words-1] &= 1<<r - 1
			}
			return v
		}
		flip := func(v []uint64, n int) []uint64 {
			w := slices.Clone(v)
			perm := make([]int, c.bits)
			for i := range perm {
				perm[i] = i
			}
			for i := 0; i < n; i++ { // partial Fisher–Yates: n distinct bits
				k := i + int(st.Intn(uint64(c.bits-i)))
				perm[i], perm[k] = perm[k], perm[i]
				w[perm[i]/64] ^= 1 << (perm[i] % 64)
			}
			return w
		}
		var all [][]uint64
		var ids []uint64
		bases := make([][]uint64, 20)
		for i := range bases {
			bases[i] = random()
		}
		for i := 0; i < 600; i++ {
			v := flip(bases[i%len(bases)], int(st.Intn(uint64(c.d+3))))
			id := uint64(i * 7 % 1000)
			all, ids = append(all, v), append(ids, id)
			if err := x.Add(id, v); err != nil {
				t.Fatal(err)
			}
		}
		// remove a few and check they disappear
		removed := map[uint64]bool{}
		for _, id := range []uint64{7, 14, 700} {
			removed[id] = x.Remove(id) > 0
		}
		for qi := 0; qi < 200; qi++ {
			q := flip(bases[qi%len(bases)], int(st.Intn(uint64(c.d+2))))
			for d := 0; d <= c.d; d++ {
				got, err := x.Query(nil, q, d)
				if err != nil {
					t.Fatal(err)
				}
				var want []HammingMatch
				for i, v := range all {
					if dist := Hamming(q, v); dist <= d && !removed[ids[i]] {
						want = append(want, HammingMatch{ID: ids[i], Distance: dist})
					}
				}
				slices.SortFunc(want, func(a, b HammingMatch) int {
					if a.Distance != b.Distance {
						return a.Distance - b.Distance
					}
					return int(a.ID) - int(b.ID)
				})
				if !slices.Equal(got, want) {
					t.Fatalf("bits=%d d=%d query %d: got %v, want %v", c.bits, d, qi, got, want)
				}
			}
		}
		if _, err := x.Query(nil, all[0], c.d+1); !errors.Is(err, ErrParams) {
			t.Errorf("distance beyond MaxDist: %v", err)
		}
		if err := x.Add(1, make([]uint64, words+1)); !errors.Is(err, ErrSketchLength) {
			t.Errorf("wrong length: %v", err)
		}
	}
}

func BenchmarkHammingQuery(b *testing.B) {
	x, _ := NewHammingIndex(64, 3, 1)
	st := rng.New(5)
	for i := 0; i < 100000; i++ {
		x.Add(uint64(i), []uint64{st.Uint64()})
	}
	q := []uint64{st.Uint64()}
	var dst []HammingMatch
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = x.Query(dst[:0], q, 3)
	}
}
