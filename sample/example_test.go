package sample_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/sample"
	"github.com/neardup/neardup/sketch"
)

func set(lo, hi uint64) []feature.Feature {
	var fs []feature.Feature
	for i := lo; i < hi; i++ {
		fs = append(fs, feature.Feature{ID: i * 0x9e3779b97f4a7c15, Weight: 1})
	}
	return fs
}

func ExampleNew() {
	s, err := sample.New(sample.Config{Algorithm: sketch.OPH, K: 128, Seed: 1})
	if err != nil {
		panic(err)
	}
	a := sample.Make(s, set(0, 1000))   // features 0..999
	b := sample.Make(s, set(200, 1200)) // J = 800/1200 = 0.667
	e, _ := sketch.Jaccard(a, b)
	fmt.Printf("J ≈ %.2f ± %.2f\n", e.J, e.StdErr)
	// Output: J ≈ 0.72 ± 0.04
}

func ExampleSampler_Sketch() {
	s, _ := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 4, Seed: 7})
	var buf []uint64
	buf = s.Sketch(buf[:0], set(0, 10)) // reuse buf across documents
	fmt.Println(len(buf), s.Header().Algorithm)
	// Output: 4 minhash
}

func ExampleMake() {
	s, _ := sample.New(sample.Config{Algorithm: sketch.BottomK, K: 256, Seed: 3})
	sk := sample.Make(s, set(0, 5000))
	fmt.Printf("%v holds %d hashes; estimated size %.0f (true 5000)\n", sk.Header.Algorithm, len(sk.Values), sk.Size)
	// Output: bottomk holds 256 hashes; estimated size 5486 (true 5000)
}

func ExampleBitCounter() {
	s, _ := sample.New(sample.Config{Algorithm: sketch.LazyBits, K: 128, Seed: 1})
	s.Sketch(nil, set(0, 1000))
	c := s.(sample.BitCounter).Counter()
	fmt.Printf("%.1f bits per input per sample\n", c.PerInputPerSample())
	// Output: 2.0 bits per input per sample
}

func ExampleConfig() {
	// The zero Config is valid: OPH, 128 samples, 5-word shingles.
	var c sample.Config
	c.EnsureDefaults()
	fmt.Println(c.Algorithm, c.K, c.Features)
	// Every problem at once.
	err := sample.Config{Algorithm: sketch.LazyBitsBatched, K: -1, Block: 32}.Validate()
	fmt.Println(err)
	// Output:
	// oph 128 shingle k=5 nowrap format=auto case=lower norm=none digits=keep punct=drop seed=0 weight=set tokenizer=unicode-v1
	// sample: invalid parameter: k = -1 not in [1, 65536]
	// sample: invalid parameter: block 32 not 64 or 128
}

func ExampleNew_parameters() {
	// Sampler parameters are Config fields: the modulus of Proportional,
	// the block of LazyBitsBatched, the buffer of Prefix and LazyBits.
	s, _ := sample.New(sample.Config{Algorithm: sketch.Proportional, Modulus: 32, Seed: 1})
	fmt.Println(len(s.Sketch(nil, set(0, 3200))) > 0, s.Header().Params)
	b, _ := sample.New(sample.Config{Algorithm: sketch.LazyBitsBatched, Block: 64})
	fmt.Println(b.Header().Params)
	// The header records the feature configuration's hash.
	m, _ := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 8})
	fmt.Println(m.Header().Features == (feature.Options{}).ConfigHash())
	// Output:
	// true 32
	// 64
	// true
}

func ExampleNew_weighted() {
	// Weighted samplers come from the same constructor.
	s, _ := sample.New(sample.Config{Algorithm: sketch.ICWS, K: 64, Features: feature.Options{Weighting: feature.WeightCount}})
	sk := sample.Make(s, []feature.Feature{{ID: 1, Weight: 2}, {ID: 2, Weight: 0.5}})
	fmt.Println(sk.Header.Algorithm, len(sk.Values), sk.Size)
	// Output: icws 64 2.5
}

func ExampleConfig_Size() {
	fs := []feature.Feature{{ID: 1, Weight: 2}, {ID: 2, Weight: 0.5}}
	fmt.Println(sample.Config{}.Size(fs), sample.Config{Algorithm: sketch.CWS}.Size(fs))
	// Output: 2 2.5
}

func ExampleCounter_PerInputPerSample() {
	c := sample.Counter{Inputs: 10, Samples: 1280, Bits: 2560}
	fmt.Println(c.PerInputPerSample())
	// Output: 2
}

func ExampleVersion() {
	// A sampler's version is written into every sketch header; sketches of
	// different versions never compare (sketch.ErrMismatch).
	s, _ := sample.New(sample.Config{Algorithm: sketch.MinHash, K: 64, Seed: 1})
	fmt.Println(s.Header().Version == sample.Version(sketch.MinHash), sample.Version(sketch.MinHash))
	// Output: true 2
}

func ExampleNewSketcher() {
	// One Sketcher per goroutine: body -> fingerprint, features, sketch.
	s, err := sample.NewSketcher(sample.Config{K: 64})
	if err != nil {
		panic(err)
	}
	var a, b sample.Sketched // reused across documents
	s.Sketch(&a, []byte("the quick brown fox jumps over the lazy dog again and again"), false)
	s.Sketch(&b, []byte("the quick brown fox jumps over the lazy dog again and again!"), false)
	fmt.Println(a.Fingerprint == b.Fingerprint, len(a.Features), len(a.Values), a.Size)
	sa, sb := a.Sketch(s.Header()), b.Sketch(s.Header())
	e, _ := sketch.Jaccard(&sa, &sb)
	fmt.Println(e.J)
	// Output:
	// false 8 64 8
	// 1
}

func ExampleSketcher_Sketch() {
	// A Sketched is reused across documents: its buffers are refilled,
	// so a copy is needed of whatever must outlive the next call.
	s, _ := sample.NewSketcher(sample.Config{K: 16, Seed: 1})
	var out sample.Sketched
	var fps []identity.Fingerprint
	for i, body := range []string{
		"<p>one two three four five six</p>",
		"one two three four five six",
	} {
		s.Sketch(&out, []byte(body), i == 0) // the first is known to be HTML
		fps = append(fps, out.Fingerprint)
		fmt.Println(len(out.Features), len(out.Values))
	}
	// Equal features, different bytes: a near duplicate, not an exact one.
	fmt.Println(fps[0] == fps[1])
	// Output:
	// 2 16
	// 2 16
	// false
}

func ExampleSketcher_SketchFeatures() {
	// Features extracted elsewhere (here: by hand) are sketched with the
	// Sketcher's sampler; the Fingerprint is left alone.
	s, _ := sample.NewSketcher(sample.Config{Algorithm: sketch.MinHash, K: 32, Seed: 1})
	var a, b sample.Sketched
	s.SketchFeatures(&a, set(0, 100))
	s.SketchFeatures(&b, set(0, 100))
	fmt.Println(len(a.Values), a.Size, a.Fingerprint == identity.Fingerprint{})
	sa, sb := a.Sketch(s.Header()), b.Sketch(s.Header())
	e, _ := sketch.Jaccard(&sa, &sb)
	fmt.Println(e.J)
	// Output:
	// 32 100 true
	// 1
}

func ExampleSketched_Sketch() {
	s, _ := sample.NewSketcher(sample.Config{K: 8})
	var out sample.Sketched
	s.Sketch(&out, []byte("a b c d e f g h i j"), false)
	sk := out.Sketch(s.Header()) // Values alias out.Values
	fmt.Println(sk.Header.Algorithm, len(sk.Values), sk.Size, sk.Validate() == nil)
	// Output: oph 8 6 true
}

func ExampleSketcher_Config() {
	// Config, Header, Sampler and Extractor expose the parts a Sketcher
	// is made of, with defaults filled in.
	s, _ := sample.NewSketcher(sample.Config{Seed: 9})
	c := s.Config()
	fmt.Println(c.Algorithm, c.K, c.Seed)
	h := s.Header()
	fmt.Println(h.Algorithm, h.K, h == s.Sampler().Header())
	fmt.Println(s.Extractor(true).Options().K)
	// Output:
	// oph 128 9
	// oph 128 true
	// 5
}

func ExampleConfig_Validate() {
	fmt.Println(sample.Config{}.Validate())
	err := sample.Config{K: sample.MaxK + 1}.Validate()
	fmt.Println(errors.Is(err, sample.ErrParam))
	// Output:
	// <nil>
	// true
}

func ExampleConfig_EnsureDefaults() {
	c := sample.Config{Algorithm: sketch.Proportional}
	c.EnsureDefaults()
	fmt.Println(c.K, c.Modulus, c.Block, c.BufLen)
	// Output: 128 64 128 16
}

// BatchCounts is the distribution of the number of slots a feature is lucky
// for in a block of the batched sampler: the book's table (4.2) for m = 128
// and bias 127/128, and the sampler's own bias, under which a feature is
// lucky nowhere in a block with probability 1/e.
func ExampleBatchCounts() {
	book := sample.BatchCounts(128, 1.0/128)
	fmt.Printf("%.9f %.9f %.9f %.9f\n", book[0], book[1], book[2], book[3])
	own := sample.BatchCounts(128, sketch.BatchedLuck(128))
	fmt.Printf("%.6f %.6f\n", own[0], 1/math.E)
	// Output:
	// 0.366437716 0.369323052 0.184661526 0.061069166
	// 0.367879 0.367879
}
