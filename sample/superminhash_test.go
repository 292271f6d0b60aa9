package sample

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// refSuperMinHash is Ertl's Algorithm 1 without its shortcuts: every feature
// runs the whole Fisher–Yates shuffle (k steps) on an explicit permutation,
// drawing the same words as superMinHash. The fast sampler stops each
// feature at j > a, keeps the permutation lazily with stamps, and skips the
// stream for step 0; none of that may change a value.
func refSuperMinHash(s *superMinHash, fs []feature.Feature) []uint64 {
	m := int(s.h.K)
	b := uint(64 - s.shift)
	h := make([]uint64, m)
	for i := range h {
		h[i] = ^uint64(0)
	}
	p := make([]uint64, m)
	for _, f := range fs {
		for i := range p {
			p[i] = uint64(i)
		}
		w := rng.Mix64(f.ID ^ s.key)
		st := rng.New(w)
		for j := 0; j < m; j++ {
			if j > 0 {
				w = st.Uint64()
			}
			var r uint64
			var kk uint64
			if j == 0 {
				var dummy rng.Stream
				kk, r = uniformIndex(w, uint64(m), &dummy)
			} else {
				kk, r = uniformIndex(w, uint64(m-j), &st)
			}
			kk += uint64(j)
			p[j], p[kk] = p[kk], p[j]
			v := r >> (b & 63)
			if b > 0 {
				v |= uint64(j) << (64 - b)
			}
			h[p[j]] = min(h[p[j]], v)
		}
	}
	return h
}

// TestSuperMinHashReference: the fast sampler equals the unshortened
// algorithm on sets small and large, with duplicates, for k from 1 to 200
// (powers of two and not), and across many features (stamp reuse).
func TestSuperMinHashReference(t *testing.T) {
	st := rng.New(23)
	for _, k := range []int{1, 2, 3, 16, 100, 128, 200} {
		smp, _ := newSampler(sketch.SuperMinHash, k, 5, Config{})
		s := smp.(*superMinHash)
		for _, n := range []int{1, 2, 7, 50, 300, 2000} {
			fs := make([]feature.Feature, n)
			for i := range fs {
				fs[i] = feature.Feature{ID: st.Uint64(), Weight: 1}
			}
			fs = append(fs, fs[:n/3]...)
			got := s.Sketch(nil, fs)
			if want := refSuperMinHash(s, fs); !slices.Equal(got, want) {
				t.Fatalf("k=%d n=%d: fast and reference SuperMinHash differ at slot %d", k, n, firstDiff(got, want))
			}
		}
	}
}
