package sample

import (
	"math/bits"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// ophBinsRef is ophBins without blocks or prefetching: the plain loop the
// kernel must agree with.
func ophBinsRef(v []uint64, fs []feature.Feature, key uint64) {
	k := uint64(len(v))
	for _, f := range fs {
		h := rng.Mix64(f.ID ^ key)
		hi, _ := bits.Mul64(h, k)
		v[hi] = min(v[hi], h)
	}
}

// TestOPHBinsKernel compares ophBins with ophBinsRef on random features
// at every length around the block and prefetch boundaries, 0 and 1
// included, for several k (powers of two and not), starting from empty
// bins and from bins already holding values.
func TestOPHBinsKernel(t *testing.T) {
	st := rng.New(34)
	var lens []int
	for n := 0; n <= 3*ophAhead+ophBlock+2; n++ {
		lens = append(lens, n)
	}
	lens = append(lens, 1000, 4097)
	for _, k := range []int{1, 2, 3, 64, 100, 128, 1000} {
		for _, n := range lens {
			fs := make([]feature.Feature, n)
			for i := range fs {
				fs[i] = feature.Feature{ID: st.Uint64(), Weight: 1}
			}
			key := st.Uint64()
			got := make([]uint64, k)
			want := make([]uint64, k)
			for i := range got {
				x := uint64(sketch.OPHEmpty)
				if st.Uint64()&3 == 0 {
					x = st.Uint64()
				}
				got[i], want[i] = x, x
			}
			ophBins(got, fs, key)
			ophBinsRef(want, fs, key)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("k=%d n=%d: bin %d = %#x, want %#x", k, n, i, got[i], want[i])
				}
			}
		}
	}
}

// FuzzOPHBins compares ophBins with ophBinsRef on fuzzed ids, k and
// key.
func FuzzOPHBins(f *testing.F) {
	f.Add([]byte{}, uint16(128), uint64(1))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint16(3), uint64(7))
	f.Fuzz(func(t *testing.T, ids []byte, k16 uint16, key uint64) {
		k := int(k16%2048) + 1
		// Expand the bytes to features (each byte seeds one id) so that
		// short inputs still make blocks longer than ophAhead.
		fs := make([]feature.Feature, 0, 4*len(ids))
		for i, b := range ids {
			for r := range 4 {
				fs = append(fs, feature.Feature{ID: rng.Hash(uint64(b), uint64(i*4+r))})
			}
		}
		got := make([]uint64, k)
		want := make([]uint64, k)
		for i := range got {
			got[i], want[i] = sketch.OPHEmpty, sketch.OPHEmpty
		}
		ophBins(got, fs, key)
		ophBinsRef(want, fs, key)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("k=%d n=%d: bin %d = %#x, want %#x", k, len(fs), i, got[i], want[i])
			}
		}
	})
}
