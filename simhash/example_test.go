package simhash_test

import (
	"fmt"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/simhash"
)

func docFeatures(ids ...uint64) []feature.Feature {
	var fs []feature.Feature
	for _, id := range ids {
		fs = append(fs, feature.Feature{ID: id, Weight: 1})
	}
	return fs
}

func ExampleHasher_Sum() {
	h, _ := simhash.New(256, 1)
	a := h.Sum(nil, docFeatures(1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
	b := h.Sum(nil, docFeatures(1, 2, 3, 4, 5, 6, 7, 8, 9, 11))
	c := h.Sum(nil, docFeatures(21, 22, 23, 24, 25, 26, 27, 28, 29, 30))
	// near-duplicates differ in few of the 256 bits, unrelated ones in about half
	fmt.Println(simhash.Distance(a, b) < 64, simhash.Distance(a, c) > 80)
	// Output: true true
}

func ExampleSum64() {
	x := simhash.Sum64(1, docFeatures(1, 2, 3))
	fmt.Println(x == simhash.Sum64(1, docFeatures(3, 2, 1))) // order does not matter
	// Output: true
}

func ExampleMinHashBits() {
	a := []uint64{11, 22, 33, 44}
	b := []uint64{11, 22, 33, 45}
	ba := simhash.MinHashBits(nil, a, 1, 7)
	bb := simhash.MinHashBits(nil, b, 1, 7)
	d := simhash.Distance(ba, bb)
	fmt.Println(d <= 1, len(ba))
	// Output: true 1
}

func ExampleCosine() {
	fmt.Printf("%.3f\n", simhash.Cosine(16, 64)) // a quarter of the bits differ: θ = π/4
	// Output: 0.707
}

func ExampleEstimateJaccard() {
	fmt.Println(simhash.EstimateJaccard(64, 512)) // 1/8 of 1-bit samples differ
	// Output: 0.75
}

func ExampleNew() {
	h, err := simhash.New(128, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Bits(), h.Words(), len(h.Sum(nil, docFeatures(1, 2, 3))))
	_, err = simhash.New(100, 1) // not a multiple of 64
	fmt.Println(err != nil)
	// Output:
	// 128 2 2
	// true
}

func ExampleDistance() {
	fmt.Println(simhash.Distance([]uint64{0b1010, 0}, []uint64{0b0110, 1 << 63}))
	// Output: 3
}
