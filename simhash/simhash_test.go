package simhash

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// exactDisagreement enumerates all 2^n sign vectors s ∈ {±1}^n and returns
// the exact probability that [x·s > 0] ≠ [y·s > 0]: the law of one SimHash
// bit when each feature's coordinate is an independent fair ±1.
func exactDisagreement(x, y []float64) float64 {
	n := len(x)
	diff := 0
	for s := 0; s < 1<<n; s++ {
		var dx, dy float64
		for i := range n {
			if s>>i&1 == 1 {
				dx += x[i]
				dy += y[i]
			} else {
				dx -= x[i]
				dy -= y[i]
			}
		}
		if (dx > 0) != (dy > 0) {
			diff++
		}
	}
	return float64(diff) / float64(int(1)<<n)
}

// TestBitLawExact compares the fraction of differing bits with the exact
// probability, over 300 seeds × 128 bits = 38,400 bit trials per case. Bits
// of one sketch are independent fair coins for distinct features (bits of
// a well-mixed 64-bit hash), so the count is binomial: |rate − p| <=
// 4 sqrt(p(1−p)/n) + 1/n fails with probability < 1e-4 per case.
func TestBitLawExact(t *testing.T) {
	st := rng.New(5)
	for c := range 6 {
		n := 4 + 2*c // up to 14 features: 16k sign vectors
		x := make([]float64, n)
		y := make([]float64, n)
		var fx, fy []feature.Feature
		for i := range n {
			// overlapping supports with different weights
			if i < n-2 || c%2 == 0 {
				x[i] = 0.1 + st.Float64()
			}
			if i >= 2 || c%3 == 0 {
				y[i] = 0.1 + st.Float64()
			}
			if i == 1 {
				y[i] = x[i] // an exactly shared feature
			}
			id := st.Uint64()
			fx = append(fx, feature.Feature{ID: id, Weight: x[i]})
			fy = append(fy, feature.Feature{ID: id, Weight: y[i]})
		}
		p := exactDisagreement(x, y)
		const seeds = 300
		diff, total := 0, 0
		var a, b []uint64
		for seed := range uint64(seeds) {
			h, _ := New(128, seed)
			a = h.Sum(a[:0], fx)
			b = h.Sum(b[:0], fy)
			diff += Distance(a, b)
			total += 128
		}
		got := float64(diff) / float64(total)
		bound := 4*math.Sqrt(p*(1-p)/float64(total)) + 1/float64(total)
		if math.Abs(got-p) > bound {
			t.Errorf("case %d (%d features): disagreement %.4f, exact %.4f (bound %.4f)", c, n, got, p, bound)
		}
		// the θ/π law, for reference only (it is exact only for Gaussian
		// projections)
		dot, nx, ny := 0.0, 0.0, 0.0
		for i := range n {
			dot += x[i] * y[i]
			nx += x[i] * x[i]
			ny += y[i] * y[i]
		}
		t.Logf("case %d: exact %.4f measured %.4f θ/π %.4f", c, p, got, math.Acos(dot/math.Sqrt(nx*ny))/math.Pi)
	}
}

func TestSum64MatchesSum(t *testing.T) {
	fs := []feature.Feature{{ID: 1, Weight: 1}, {ID: 2, Weight: 3}, {ID: 3, Weight: 0}, {ID: 4, Weight: -1}}
	h, _ := New(192, 7)
	s := h.Sum(nil, fs)
	if len(s) != 3 || s[0] != Sum64(7, fs) {
		t.Errorf("Sum %x, Sum64 %x", s, Sum64(7, fs))
	}
	if Sum64(7, nil) != 0 || Sum64(7, fs[2:]) != 0 {
		t.Error("empty or zero-weight set must give 0")
	}
	if _, err := New(100, 1); err == nil {
		t.Error("New(100) accepted")
	}
}

// TestMinHashBitsLaw: equal samples give equal bits; unequal samples agree
// on all b bits with probability 2^-b. With k positions of which a fraction
// J are equal, the number of agreeing positions is J·k + Bin((1−J)k, 2^-b);
// checked within 4 standard deviations over 200 trials pooled.
func TestMinHashBitsLaw(t *testing.T) {
	st := rng.New(9)
	for _, b := range []int{1, 2, 5, 64} {
		const k, trials, j = 256, 200, 0.6
		mismatched, agreeByLuck := 0, 0
		for trial := range uint64(trials) {
			x := make([]uint64, k)
			y := make([]uint64, k)
			for i := range x {
				x[i] = st.Uint64()
				if st.Float64() < j {
					y[i] = x[i]
				} else {
					y[i] = st.Uint64()
				}
			}
			bx := MinHashBits(nil, x, b, trial)
			by := MinHashBits(nil, y, b, trial)
			if len(bx) != (k*b+63)/64 {
				t.Fatalf("b=%d: %d words", b, len(bx))
			}
			for i := range k {
				vx, vy := field(bx, i, b), field(by, i, b)
				if x[i] == y[i] && vx != vy {
					t.Fatalf("b=%d: equal samples gave different bits", b)
				}
				if x[i] != y[i] {
					mismatched++
					if vx == vy {
						agreeByLuck++
					}
				}
			}
		}
		p := math.Ldexp(1, -b)
		mean := float64(mismatched) * p
		if sd := math.Sqrt(float64(mismatched) * p * (1 - p)); math.Abs(float64(agreeByLuck)-mean) > 4*sd+1 {
			t.Errorf("b=%d: %d lucky agreements of %d, expected %.1f ± %.1f", b, agreeByLuck, mismatched, mean, sd)
		}
	}
}

func field(words []uint64, i, b int) uint64 {
	var v uint64
	for j := range b {
		pos := i*b + j
		v |= (words[pos/64] >> (pos % 64) & 1) << j
	}
	return v
}

func TestGolden(t *testing.T) {
	var fs []feature.Feature
	samples := make([]uint64, 20)
	st := rng.New(1)
	for i := range 50 {
		fs = append(fs, feature.Feature{ID: st.Uint64(), Weight: float64(1 + i%4)})
	}
	for i := range samples {
		samples[i] = st.Uint64()
	}
	h, _ := New(128, 3)
	out := map[string][]string{}
	hex := func(name string, ws []uint64) {
		for _, w := range ws {
			out[name] = append(out[name], fmt.Sprintf("%016x", w))
		}
	}
	hex("sum64-seed3", []uint64{Sum64(3, fs)})
	hex("sum128-seed3", h.Sum(nil, fs))
	hex("minhashbits-b1", MinHashBits(nil, samples, 1, 3))
	hex("minhashbits-b7", MinHashBits(nil, samples, 7, 3))
	got, _ := json.MarshalIndent(out, "", "  ")
	got = append(got, '\n')
	path := filepath.Join("testdata", "simhash.golden.json")
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(got) != string(want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("outputs differ from %s; see .got", path)
	}
}

func BenchmarkSum(b *testing.B) {
	fs := make([]feature.Feature, 1000)
	st := rng.New(1)
	for i := range fs {
		fs[i] = feature.Feature{ID: st.Uint64(), Weight: 1}
	}
	for _, nbits := range []int{64, 256} {
		b.Run(fmt.Sprintf("bits=%d/features=1000", nbits), func(b *testing.B) {
			h, _ := New(nbits, 1)
			dst := make([]uint64, 0, nbits/64)
			b.ReportAllocs()
			b.SetBytes(int64(len(fs)) * 8)
			for b.Loop() {
				dst = h.Sum(dst[:0], fs)
			}
		})
	}
}
