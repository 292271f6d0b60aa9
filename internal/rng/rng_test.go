package rng

import (
	"math"
	"testing"
)

// Golden values pin the generator: stored sketches depend on them.
func TestGolden(t *testing.T) {
	if got, want := Mix64(1), uint64(0x5692161d100b05e5); got != want {
		t.Errorf("Mix64(1) = %#x, want %#x", got, want)
	}
	s := New(42)
	want := []uint64{0x989b3f130a063869, 0x290db4bf2570ded7, 0x2a990be63a01b2d5}
	for i, w := range want {
		if got := s.Uint64(); got != w {
			t.Errorf("New(42) word %d = %#x, want %#x", i, got, w)
		}
	}
	if got, want := Hash(7, 11), uint64(0xce8719bc27bfce04); got != want {
		t.Errorf("Hash(7, 11) = %#x, want %#x", got, want)
	}
	if got, want := Key(1, 2, 3), uint64(0x9a184c292d1d2c73); got != want {
		t.Errorf("Key(1, 2, 3) = %#x, want %#x", got, want)
	}
}

func TestKeyDistinct(t *testing.T) {
	seen := map[uint64]bool{}
	for a := uint64(0); a < 100; a++ {
		for b := uint64(0); b < 100; b++ {
			k := Key(5, a, b)
			if seen[k] {
				t.Fatalf("Key collision at (%d, %d)", a, b)
			}
			seen[k] = true
		}
	}
	if Key(5) == 5 || Key(5) == Key(5, 0) {
		t.Error("Key with no labels must differ from the seed and from Key(seed, 0)")
	}
}

// The mean of n uniforms has standard deviation sqrt(1/12n); 5 sigma bound.
func TestUniformMoments(t *testing.T) {
	s := New(1)
	const n = 200000
	var sum, sumOpen float64
	for i := 0; i < n; i++ {
		f := s.Float64()
		o := s.Open01()
		if f < 0 || f >= 1 || o <= 0 || o >= 1 {
			t.Fatalf("out of range: %v %v", f, o)
		}
		sum += f
		sumOpen += o
	}
	sd := math.Sqrt(1.0 / 12 / n)
	for _, m := range []float64{sum / n, sumOpen / n} {
		if math.Abs(m-0.5) > 5*sd {
			t.Errorf("mean %v deviates from 0.5 by more than 5 sd (%v)", m, sd)
		}
	}
}

// Chi-square over 10 buckets: 9 degrees of freedom, the 0.9999 quantile is 33.7.
func TestIntnUniform(t *testing.T) {
	s := New(3)
	var counts [10]int
	const n = 100000
	for i := 0; i < n; i++ {
		counts[s.Intn(10)]++
	}
	var chi float64
	for _, c := range counts {
		d := float64(c) - n/10
		chi += d * d / (n / 10)
	}
	if chi > 33.7 {
		t.Errorf("chi-square %v > 33.7 (p = 1e-4)", chi)
	}
}

func BenchmarkHash(b *testing.B) {
	var acc uint64
	for i := 0; i < b.N; i++ {
		acc += Hash(1, uint64(i))
	}
	_ = acc
}

func ExampleNew() {
	s := New(42)
	_ = s.Uint64() // the same word on every machine, for every run
}

// TestToFloatOpen checks the edges of ToFloat: the smallest and largest
// hashes map strictly inside (0, 1) (the largest used to round to 1).
func TestToFloatOpen(t *testing.T) {
	for _, h := range []uint64{0, 1, 1 << 11, ^uint64(0) - 1<<11, ^uint64(0) - 1, ^uint64(0)} {
		if u := ToFloat(h); !(u > 0 && u < 1) {
			t.Errorf("ToFloat(%#x) = %v, not in (0, 1)", h, u)
		}
	}
}
