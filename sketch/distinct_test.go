package sketch_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

// stream returns parts of a stream over n distinct feature ids, each id in
// one to three parts, and the ids.
func stream(seed uint64, n, parts int) ([][]feature.Feature, []feature.Feature) {
	s := rng.New(rng.Key(seed))
	out := make([][]feature.Feature, parts)
	all := make([]feature.Feature, n)
	for i := range all {
		f := feature.Feature{ID: rng.Hash(seed, uint64(i)), Weight: 1}
		all[i] = f
		for c := 0; c <= int(s.Intn(3)); c++ {
			p := s.Intn(uint64(parts))
			out[p] = append(out[p], f)
		}
	}
	// Within a part ids are distinct, as the extractor gives them.
	for i, p := range out {
		slices.SortFunc(p, func(a, b feature.Feature) int {
			if a.ID < b.ID {
				return -1
			} else if a.ID > b.ID {
				return 1
			}
			return 0
		})
		out[i] = slices.CompactFunc(p, func(a, b feature.Feature) bool { return a.ID == b.ID })
	}
	return out, all
}

// TestDistinctCounterIsSketchOfUnion: for every sampler that has a union,
// adding the parts' sketches (into two counters, merged) gives exactly the
// sketch of all distinct features at once — the consistency that makes
// counting by parts possible — and so the same cardinality estimate.
func TestDistinctCounterIsSketchOfUnion(t *testing.T) {
	parts, all := stream(3, 20000, 37)
	for _, alg := range []sketch.Algorithm{sketch.MinHash, sketch.BottomK, sketch.OPH, sketch.SuperMinHash, sketch.Prefix, sketch.LazyBits, sketch.Proportional} {
		smp, err := sample.New(sample.Config{Algorithm: alg, K: 256, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		a, err := sketch.NewDistinctCounter(smp.Header())
		if err != nil {
			t.Fatal(alg, err)
		}
		b, _ := sketch.NewDistinctCounter(smp.Header())
		var vals []uint64
		for i, p := range parts {
			vals = smp.Sketch(vals[:0], p)
			c := a
			if i%2 == 1 {
				c = b
			}
			if err := c.Add(vals); err != nil {
				t.Fatal(alg, err)
			}
		}
		if err := a.Merge(b); err != nil {
			t.Fatal(alg, err)
		}
		want := smp.Sketch(nil, all)
		if !slices.Equal(a.Union().Values, want) {
			t.Errorf("%v: union of parts differs from the sketch of the whole", alg)
		}
		got, err := a.Cardinality()
		if err != nil {
			t.Fatal(alg, err)
		}
		direct, _ := sketch.Cardinality(&sketch.Sketch{Header: smp.Header(), Values: want})
		if got != direct {
			t.Errorf("%v: cardinality %v, of the whole %v", alg, got, direct)
		}
	}
}

// TestDistinctCounterAccuracy: over 20 seeds, bottom-k counts of 20,000
// distinct ids spread over 37 parts lie near the exact count. The estimate
// (k−1)/U_(k) has relative standard error about 1/sqrt(k−2) = 0.031 for
// k = 1024; 20 estimates all lie within 4 of those (12.5%) except with
// probability about 20 · 6e-5, and their mean within 4/sqrt(20) of them
// (2.8%, plus the estimator's O(1/k) bias).
func TestDistinctCounterAccuracy(t *testing.T) {
	const n, k = 20000, 1024
	var sum float64
	for seed := uint64(1); seed <= 20; seed++ {
		parts, _ := stream(seed+100, n, 37)
		smp, _ := sample.New(sample.Config{Algorithm: sketch.BottomK, K: k, Seed: seed})
		c, _ := sketch.NewDistinctCounter(smp.Header())
		var vals []uint64
		for _, p := range parts {
			vals = smp.Sketch(vals[:0], p)
			if err := c.Add(vals); err != nil {
				t.Fatal(err)
			}
		}
		est, err := c.Cardinality()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(est-n)/n > 4/math.Sqrt(k-2) {
			t.Errorf("seed %d: estimate %.0f of %d", seed, est, n)
		}
		sum += est
	}
	if mean := sum / 20; math.Abs(mean-n)/n > 4/math.Sqrt(20*(k-2))+1.0/k {
		t.Errorf("mean estimate %.0f of %d", mean, n)
	}
}

func TestDistinctCounterErrors(t *testing.T) {
	smp, _ := sample.New(sample.Config{Algorithm: sketch.CWS, K: 16})
	if _, err := sketch.NewDistinctCounter(smp.Header()); !errors.Is(err, sketch.ErrUnsupported) {
		t.Errorf("weighted: %v", err)
	}
	h := mh(1).Header
	h.Bits = 8
	if _, err := sketch.NewDistinctCounter(h); !errors.Is(err, sketch.ErrUnsupported) {
		t.Errorf("b-bit: %v", err)
	}
	a, _ := sketch.NewDistinctCounter(mh(1, 2).Header)
	other := mh(1, 2).Header
	other.Seed = 9
	b, _ := sketch.NewDistinctCounter(other)
	if err := a.Merge(b); !errors.Is(err, sketch.ErrMismatch) {
		t.Errorf("merge of different seeds: %v", err)
	}
	if n, err := a.Cardinality(); n != 0 || err != nil || a.Union() != nil {
		t.Errorf("empty counter: %v %v", n, err)
	}
	if err := a.Add([]uint64{1, 2, 3}); err == nil {
		t.Error("3 values under k = 2 accepted")
	}
}

func ExampleDistinctCounter() {
	smp, _ := sample.New(sample.Config{Algorithm: sketch.BottomK, K: 4096})
	c, _ := sketch.NewDistinctCounter(smp.Header())
	var vals []uint64
	// Three overlapping batches over ids 0..29,999.
	for _, lo := range []uint64{0, 10000, 15000} {
		var batch []feature.Feature
		for id := lo; id < lo+15000; id++ {
			batch = append(batch, feature.Feature{ID: rng.Hash(1, id), Weight: 1})
		}
		vals = smp.Sketch(vals[:0], batch)
		c.Add(vals)
	}
	n, _ := c.Cardinality()
	fmt.Println(math.Abs(n-30000) < 30000*0.05)
	// Output: true
}
