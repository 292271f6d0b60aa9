package radix

import (
	"cmp"
	"slices"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

// TestSortHigh32 checks the sort against slices.Sort on entries made as
// the join makes them (low halves increasing), with many equal keys.
func TestSortHigh32(t *testing.T) {
	r := rng.New(5)
	for _, n := range []int{0, 1, 2, 100, 5000} {
		a := make([]uint64, n)
		for i := range a {
			a[i] = r.Uint64()%64<<58 | r.Uint64()&0x03ff_ffff_0000_0000 | uint64(i)
			if i%3 == 0 {
				a[i] = a[i]&0xffffffff | 0x1234<<32
			}
		}
		want := slices.Clone(a)
		slices.Sort(want)
		got, _ := SortHigh32(a, make([]uint64, n))
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: radix sort differs from slices.Sort", n)
		}
	}
}

// TestOrder checks Order against a comparison sort by (key, number), on
// keys that are random, that share their high half, and that are equal.
func TestOrder(t *testing.T) {
	r := rng.New(7)
	for _, n := range []int{0, 1, 2, 1000, 70000} {
		keys := make([]uint64, n)
		for i := range keys {
			switch i % 4 {
			case 0:
				keys[i] = r.Uint64()
			case 1:
				keys[i] = 0xdead_beef<<32 | r.Uint64()%8 // a shared high half
			case 2:
				keys[i] = r.Uint64() % 16 // small keys: equal ones
			default:
				keys[i] = keys[i/2]
			}
		}
		want := make([]uint32, n)
		for i := range want {
			want[i] = uint32(i)
		}
		slices.SortFunc(want, func(x, y uint32) int {
			if c := cmp.Compare(keys[x], keys[y]); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		got := Order(n, func(i int) uint64 { return keys[i] })
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: Order differs from a comparison sort", n)
		}
	}
}

// BenchmarkOrder orders a million positions by random 64-bit keys, the
// size of a 1M-document run's exact-duplicate and join-numbering sorts,
// against the comparison sort they replaced.
func BenchmarkOrder(b *testing.B) {
	r := rng.New(11)
	keys := make([]uint64, 1<<20)
	for i := range keys {
		keys[i] = r.Uint64()
	}
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			Order(len(keys), func(i int) uint64 { return keys[i] })
		}
	})
	b.Run("slices.SortFunc", func(b *testing.B) {
		type numbered struct {
			key uint64
			pos int
		}
		ns := make([]numbered, len(keys))
		for b.Loop() {
			for i, k := range keys {
				ns[i] = numbered{k, i}
			}
			slices.SortFunc(ns, func(x, y numbered) int {
				if c := cmp.Compare(x.key, y.key); c != 0 {
					return c
				}
				return cmp.Compare(x.pos, y.pos)
			})
		}
	})
}
