package sample

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// naiveBottomK is the oracle: hash everything, sort, dedupe, keep k.
func naiveBottomK(key uint64, fs []feature.Feature, k int) []uint64 {
	var hs []uint64
	for _, f := range fs {
		hs = append(hs, rng.Mix64(f.ID^key))
	}
	slices.Sort(hs)
	hs = slices.Compact(hs)
	return hs[:min(k, len(hs))]
}

// TestBottomKOracle: the threshold-filtered sampler returns exactly the
// bottom-k of the distinct hashes on every path: the estimated bound (most
// inputs), the second pass (inputs dominated by duplicates, so that fewer
// than k distinct values fall under the bound), buffer cuts (k close to n),
// and tiny inputs.
func TestBottomKOracle(t *testing.T) {
	st := rng.New(17)
	for _, k := range []int{1, 3, 16, 128, 512} {
		smp, _ := newSampler(sketch.BottomK, k, 9, Config{})
		key := smp.(*bottomK).key
		for _, n := range []int{1, 2, 5, 100, 600, 1000, 5000} {
			for _, dup := range []int{0, 1, 2} {
				fs := make([]feature.Feature, n)
				for i := range fs {
					fs[i] = feature.Feature{ID: st.Uint64(), Weight: 1}
				}
				switch dup {
				case 1: // every feature three times
					fs = slices.Concat(fs, fs, fs)
				case 2: // 90% copies of a few features
					for i := range fs[:n*9/10] {
						fs[i] = fs[n-1-i%max(1, n/10)]
					}
				}
				got := smp.Sketch([]uint64{42}, fs)
				want := append([]uint64{42}, naiveBottomK(key, fs, k)...)
				if !slices.Equal(got, want) {
					t.Fatalf("k=%d n=%d dup=%d: got %d values, want %d (first diff at %d)",
						k, n, dup, len(got), len(want), firstDiff(got, want))
				}
			}
		}
	}
}

func firstDiff(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
