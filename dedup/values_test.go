package dedup

import (
	"os"
	"slices"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/rng"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/store"
)

// Values that differ in one half only (the rank byte of Prefix and the
// lazy samplers lies in the high half, most hash bits in the low one)
// fold differently: the fold keeps both halves' bits, where the low half
// alone would lose the high one's.
func TestFoldKeepsBothHalves(t *testing.T) {
	s := rng.New(11)
	for range 10000 {
		v := s.Uint64()
		d := s.Uint64()>>32 | 1 // a non-zero 32-bit difference
		if foldValue(v) == foldValue(v^d) || foldValue(v) == foldValue(v^d<<32) {
			t.Fatalf("%#x: a change of %#x in one half folds equal", v, d)
		}
		if foldValue(v&0xffffffff) != uint32(v) {
			t.Fatalf("%#x: a value of 32 bits is not its own fold", v&0xffffffff)
		}
	}
}

// For every slot-wise sampler, the estimate of a pair of sketches from
// their folded values is the estimate of their full values, over pairs of
// sets at similarities from 0.2 to 1 (fixed seeds), and no slot whose
// full values differ agrees folded. Folding would make one agree by
// chance with probability 2^-32 per such slot (values.go); the test
// compares about 1.2e5 of them, so a collision, or a sampler whose values
// fold worse than uniform hashes, fails it with probability below 1e-4
// by chance alone.
func TestFoldedEstimates(t *testing.T) {
	algs := []sketch.Algorithm{sketch.MinHash, sketch.Prefix, sketch.LazyBits, sketch.LazyBitsBatched,
		sketch.OPH, sketch.SuperMinHash, sketch.CWS, sketch.ICWS}
	s := rng.New(5)
	differ := 0
	for _, alg := range algs {
		if !alg.SlotWise() {
			t.Fatalf("%v is not slot-wise", alg)
		}
		smp, err := sample.New(sample.Config{Algorithm: alg, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		h := smp.Header()
		for p := range 250 {
			// A and B share c of their 200 features: J = c/(400-c).
			c := 67 + p*133/250
			a := make([]feature.Feature, 0, 200)
			b := make([]feature.Feature, 0, 200)
			for k := range 200 {
				w := 1 + float64(s.Intn(4))
				a = append(a, feature.Feature{ID: s.Uint64(), Weight: w})
				if k < c {
					b = append(b, a[k])
				} else {
					b = append(b, feature.Feature{ID: s.Uint64(), Weight: w})
				}
			}
			byID := func(x, y feature.Feature) int {
				if x.ID < y.ID {
					return -1
				}
				if x.ID > y.ID {
					return 1
				}
				return 0
			}
			slices.SortFunc(a, byID)
			slices.SortFunc(b, byID)
			sa := sketch.Sketch{Header: h, Values: smp.Sketch(nil, a)}
			sb := sketch.Sketch{Header: h, Values: smp.Sketch(nil, b)}
			full, err := sketch.Jaccard(&sa, &sb)
			if err != nil {
				t.Fatal(err)
			}
			fa := sketch.Sketch{Header: h, Values: slices.Clone(sa.Values)}
			fb := sketch.Sketch{Header: h, Values: slices.Clone(sb.Values)}
			foldAll(fa.Values)
			foldAll(fb.Values)
			folded, err := sketch.Jaccard(&fa, &fb)
			if err != nil {
				t.Fatal(err)
			}
			if folded != full {
				t.Fatalf("%v, pair %d: folded estimate %+v, full %+v", alg, p, folded, full)
			}
			for j, v := range sa.Values {
				if v != sb.Values[j] {
					differ++
					if fa.Values[j] == fb.Values[j] {
						t.Fatalf("%v, pair %d, slot %d: %#x and %#x fold equal", alg, p, j, v, sb.Values[j])
					}
				}
			}
		}
	}
	if differ < 100000 {
		t.Fatalf("only %d slots with different values compared", differ)
	}
	t.Logf("%d slots with different values, none folded equal", differ)
}

// A run in memory holds folded values (4 bytes a value): its pairs,
// clusters and candidates are those of a run holding full values in
// memory (under a budget it never nears) and of a run out of core. With a
// store, the records keep the full 64-bit values: the run writes their
// high halves to a file in the work directory (counted as spilled by the
// sketch stage), reads them back for the adds, and removes the file.
func TestFoldedRunKeepsFullValues(t *testing.T) {
	docs := plantedCorpus(3000)
	narrow, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever})
	if err != nil {
		t.Fatal(err)
	}
	wide, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever, Memory: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	ext, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever, Memory: 128 << 10, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if wide.Summary.External || !ext.Summary.External {
		t.Fatalf("external: %v under a budget of 1 TiB, %v under 128 KiB", wide.Summary.External, ext.Summary.External)
	}
	np, nc := outputs(t, narrow)
	for name, res := range map[string]*Result{"full values in memory": wide, "out of core": ext} {
		p, c := outputs(t, res)
		if p != np || c != nc || res.Summary.Candidates != narrow.Summary.Candidates {
			t.Fatalf("%s: pairs equal %v, clusters equal %v, %d candidates (folded in memory: %d)", name, p == np, c == nc,
				res.Summary.Candidates, narrow.Summary.Candidates)
		}
	}
	if narrow.Summary.Near == 0 {
		t.Fatal("no near duplicates found")
	}

	// Segments of 4 documents: a bucket of the high halves (about 12
	// documents here) is read back from several.
	defer func(n int) { highSegment = n }(highSegment)
	highSegment = 4 * 4 * 128
	work := t.TempDir()
	st := store.NewMemory()
	res, err := Run(bg, docsOf(docs...), Options{Exact: ExactNever, Store: st, WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	if p, c := outputs(t, res); p != np || c != nc {
		t.Fatal("with a store: pairs or clusters differ from the run without one")
	}
	for _, s := range res.Summary.Stages {
		if want := int64(4 * 128 * len(res.Docs)); s.Name == StageSketch && s.Spilled != want {
			t.Fatalf("the sketch stage spilled %d bytes, want %d (the high halves)", s.Spilled, want)
		}
	}
	if left, _ := os.ReadDir(work); len(left) != 0 {
		t.Fatalf("work files left: %v", left)
	}
	x, err := index.Open(bg, st, index.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sk, err := x.NewSketcher()
	if err != nil {
		t.Fatal(err)
	}
	var s sample.Sketched
	checked, high := 0, 0
	for i, d := range res.Docs {
		if d.ExactOf != -1 {
			continue // not indexed: its first copy is
		}
		rec, ok, err := x.Get(bg, d.Name)
		if err != nil || !ok {
			t.Fatalf("%s: record %v, %v", d.Name, ok, err)
		}
		sk.Sketch(&s, docs[i].Body, false)
		want := x.NewDoc(d.Name, &s, false).Sketch.Values
		if !slices.Equal(rec.Sketch.Values, want) {
			t.Fatalf("%s: the record's sketch values differ from the document's", d.Name)
		}
		for _, v := range want {
			if v>>32 != 0 {
				high++
			}
		}
		checked++
	}
	if checked < 2000 || high < checked*100 {
		t.Fatalf("%d records checked, %d values with a high half", checked, high)
	}
}
