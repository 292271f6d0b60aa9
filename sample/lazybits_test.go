package sample

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sketch"
)

// refLazy is the book's loop (4.1) read literally: every slot reads its run
// from the feature's bit stream with bitReader.run and offers the feature
// when the run is long enough. It returns the values and the bits counted.
func refLazy(s *lazy, fs []feature.Feature) ([]uint64, uint64) {
	k := int(s.h.K)
	b := newSlotBuf(k, s.buf.blen, s.buf.tkey, true)
	b.reset(k)
	var used uint64
	for _, f := range fs {
		r := bitReader{st: rng.New(f.ID ^ s.key)}
		for i := range k {
			if key := runKeyBase - uint32(r.run()); key <= b.best[i] {
				b.offer(i, key, f.ID)
			}
		}
		used += r.used
	}
	v := make([]uint64, k)
	for i := range v {
		b.resolve(i)
		v[i] = runByte(b.best[i], 255)<<56 | b.tail(b.ids[i*b.blen], i)>>8
	}
	return v, used + b.bits
}

// TestLazyFastPath: the word-at-a-time sampler gives the same values and
// the same bit count as the literal run-by-run loop, for k across word
// boundaries (1 … 300), short and long sets, duplicates, and small buffers.
func TestLazyFastPath(t *testing.T) {
	st := rng.New(31)
	for _, k := range []int{1, 2, 5, 31, 32, 33, 64, 100, 128, 300} {
		for _, blen := range []int{1, 16} {
			smp, _ := newSampler(sketch.LazyBits, k, 8, Config{BufLen: blen})
			s := smp.(*lazy)
			for _, n := range []int{1, 3, 40, 1000, 3000} {
				fs := make([]feature.Feature, n)
				for i := range fs {
					fs[i] = feature.Feature{ID: st.Uint64(), Weight: 1}
				}
				fs = append(fs, fs[:n/4]...)
				s.ResetCounter()
				got := s.Sketch(nil, fs)
				want, bits := refLazy(s, fs)
				if !slices.Equal(got, want) {
					t.Fatalf("k=%d blen=%d n=%d: values differ at slot %d", k, blen, n, firstDiff(got, want))
				}
				if c := s.Counter(); c.Bits != bits {
					t.Fatalf("k=%d blen=%d n=%d: %d bits counted, literal loop %d", k, blen, n, c.Bits, bits)
				}
			}
		}
	}
}
