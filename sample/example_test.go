package sample_test

import (
	"fmt"

	"github.com/neardup/neardup/feature"
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
	s, err := sample.New(sketch.OPH, 128, 1)
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
	s, _ := sample.New(sketch.MinHash, 4, 7)
	var buf []uint64
	buf = s.Sketch(buf[:0], set(0, 10)) // reuse buf across documents
	fmt.Println(len(buf), s.Header().Algorithm)
	// Output: 4 minhash
}

func ExampleMake() {
	s, _ := sample.New(sketch.BottomK, 256, 3)
	sk := sample.Make(s, set(0, 5000))
	fmt.Printf("%v holds %d hashes; estimated size %.0f (true 5000)\n", sk.Header.Algorithm, len(sk.Values), sk.Size)
	// Output: bottomk holds 256 hashes; estimated size 5486 (true 5000)
}

func ExampleBitCounter() {
	s, _ := sample.New(sketch.LazyBits, 128, 1)
	s.Sketch(nil, set(0, 1000))
	c := s.(sample.BitCounter).Counter()
	fmt.Printf("%.1f bits per input per sample\n", c.PerInputPerSample())
	// Output: 2.0 bits per input per sample
}

func ExampleWithBlock() {
	s, _ := sample.New(sketch.LazyBitsBatched, 128, 1, sample.WithBlock(64))
	fmt.Println(s.Header().Params)
	// Output: 64
}

func ExampleWithModulus() {
	s, _ := sample.New(sketch.Proportional, 0, 1, sample.WithModulus(32))
	fmt.Println(len(s.Sketch(nil, set(0, 3200))) > 0, s.Header().Params)
	// Output: true 32
}

func ExampleWithFeatures() {
	s, _ := sample.New(sketch.MinHash, 8, 1, sample.WithFeatures(0xabc))
	fmt.Printf("%#x\n", s.Header().Features)
	// Output: 0xabc
}

func ExampleWithBufLen() {
	s, _ := sample.New(sketch.Prefix, 8, 1, sample.WithBufLen(32))
	fmt.Println(s.Header().Algorithm)
	// Output: prefix
}

func ExampleCounter_PerInputPerSample() {
	c := sample.Counter{Inputs: 10, Samples: 1280, Bits: 2560}
	fmt.Println(c.PerInputPerSample())
	// Output: 2
}

func ExampleVersion() {
	// A sampler's version is written into every sketch header; sketches of
	// different versions never compare (sketch.ErrMismatch).
	s, _ := sample.New(sketch.MinHash, 64, 1)
	fmt.Println(s.Header().Version == sample.Version(sketch.MinHash), sample.Version(sketch.MinHash))
	// Output: true 2
}
