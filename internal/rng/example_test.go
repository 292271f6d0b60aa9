package rng_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/rng"
)

// Hash is a pure function of (seed, x): the same value on every machine and
// in every run, which is what consistent sampling needs.
func ExampleHash() {
	fmt.Printf("%016x\n", rng.Hash(1, 42))
	fmt.Println(rng.Hash(1, 42) == rng.Hash(1, 42), rng.Hash(1, 42) == rng.Hash(2, 42))
	// Output:
	// a9cb101be2f6824f
	// true false
}

func ExampleHash2() {
	// Pairs, for example (feature, copy) or (feature, sample slot).
	fmt.Println(rng.Hash2(1, 7, 1) == rng.Hash2(1, 7, 1), rng.Hash2(1, 7, 1) == rng.Hash2(1, 1, 7))
	// Output: true false
}

// Key derives independent sub-seeds from one user seed, one per use.
func ExampleKey() {
	seed := uint64(5)
	slots, scales := rng.Key(seed, 1), rng.Key(seed, 2)
	fmt.Println(slots != scales, rng.Key(seed) != seed, rng.Key(seed, 1, 2) != rng.Key(seed, 2, 1))
	// Output: true true true
}

func ExampleMix64() {
	// A bijection: neighbouring inputs give unrelated outputs.
	fmt.Printf("%016x\n%016x\n", rng.Mix64(1), rng.Mix64(2))
	// Output:
	// 5692161d100b05e5
	// dbd238973a2b148a
}

func ExampleToFloat() {
	u := rng.ToFloat(rng.Hash(1, 42))
	fmt.Printf("%.4f %v\n", u, rng.ToFloat(0) > 0) // never 0: its logarithm is finite
	// Output: 0.6633 true
}

// A Stream is a value: copying it forks the stream.
func ExampleStream_Uint64() {
	s := rng.New(rng.Key(9))
	fork := s
	a, b := s.Uint64(), fork.Uint64()
	fmt.Println(a == b, s.Uint64() != a)
	// Output: true true
}

func ExampleStream_Intn() {
	s := rng.New(1)
	for range 5 {
		fmt.Print(s.Intn(6)+1, " ") // a die, without modulo bias
	}
	fmt.Println()
	// Output: 5 3 3 6 2
}

func ExampleStream_Float64() {
	s := rng.New(1)
	f, o := s.Float64(), s.Open01() // [0, 1) and (0, 1)
	fmt.Printf("%.4f %.4f\n", f, o)
	// Output: 0.7497 0.3724
}
