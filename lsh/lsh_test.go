package lsh

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/rng"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// pairSamples fills a and b with k samples where each position of b equals
// the one of a with probability j (independently), else an unrelated value:
// the joint law of k independent min-hash samples of two sets of Jaccard j.
func pairSamples(st *rng.Stream, a, b []uint64, j float64) {
	for i := range a {
		a[i] = st.Uint64()
		if st.Float64() < j {
			b[i] = a[i]
		} else {
			b[i] = st.Uint64()
		}
	}
}

func TestPresetsMatchBook(t *testing.T) {
	av := AltaVista()
	// Book 6.1: 1 − (1−p^14)^5 (1+5p^14) ≈ 87%, 0.7%, 0.006% at 0.95, 0.7, 0.5.
	closed := func(j float64) float64 {
		p := math.Pow(j, 14)
		return 1 - math.Pow(1-p, 5)*(1+5*p)
	}
	for _, j := range []float64{0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99} {
		if got, want := av.Prob(j), closed(j); math.Abs(got-want) > 1e-12*math.Max(1, want) && math.Abs(got-want)/want > 1e-9 {
			t.Errorf("AltaVista P(%v) = %v, closed form %v", j, got, want)
		}
	}
	// Book 3.2: at J = 0.7 "just under one in a thousand". (Book 6.1 quotes
	// 0.7% and 0.006% for J = 0.7 and 0.5, but those are the single
	// supershingle probabilities 0.7^14 and 0.5^14 it computed just before;
	// its own formula gives 0.068% and 5.6e-6%.)
	for _, c := range []struct{ j, lo, hi float64 }{{0.95, 0.86, 0.88}, {0.7, 0.0006, 0.001}, {0.5, 5e-8, 6e-8}} {
		if got := av.Prob(c.j); got < c.lo || got > c.hi {
			t.Errorf("AltaVista P(%v) = %v, want in [%v, %v]", c.j, got, c.lo, c.hi)
		}
	}
	if av.K() != 84 || av.NumKeys() != 15 || av.Bytes() != 48 {
		t.Errorf("AltaVista k=%d keys=%d bytes=%d", av.K(), av.NumKeys(), av.Bytes())
	}
	bing := Bing()
	if bing.K() != 30 || bing.NumKeys() != 15 || bing.Bytes() != 12 {
		t.Errorf("Bing k=%d keys=%d bytes=%d", bing.K(), bing.NumKeys(), bing.Bytes())
	}
	// 16-bit values: accidental agreement of 4 of 6 at J = 0 is C(6,4) 2^-64
	// to first order, not 0.
	if p0 := bing.Prob(0); p0 <= 0 || p0 > 16*math.Ldexp(1, -64) {
		t.Errorf("Bing P(0) = %v", p0)
	}
}

// TestProbExact compares Prob with the binomial sum evaluated term by term
// in the most direct way, for every small (r, b, m) and b-bit samples.
func TestProbExact(t *testing.T) {
	for b := 1; b <= 12; b++ {
		for m := 1; m <= b; m++ {
			for _, r := range []int{1, 3, 7} {
				for _, sb := range []int{0, 1, 8} {
					p := Params{R: r, B: b, M: m, SampleBits: sb}
					for _, j := range []float64{0, 0.1, 0.5, 0.8, 0.97, 1} {
						q := j
						if sb > 0 {
							q = j + (1-j)/math.Exp2(float64(sb))
						}
						pb := math.Pow(q, float64(r))
						want := 0.0
						for i := m; i <= b; i++ {
							want += binomial(b, i) * math.Pow(pb, float64(i)) * math.Pow(1-pb, float64(b-i))
						}
						got := p.Prob(j)
						if math.Abs(got-want) > 1e-12 {
							t.Fatalf("%v: P(%v) = %v, want %v", p, j, got, want)
						}
					}
				}
			}
		}
	}
}

// TestKeysCollideAsProb checks the keys against the theory: pairs whose
// samples agree position-wise with probability J share a key with
// probability Prob(J). With n trials the collision count is binomial, so
// |rate − P| <= 4 sqrt(P(1−P)/n) + 1/n fails with probability < 1e-4 per
// check; the seed is fixed, so the test is deterministic.
func TestKeysCollideAsProb(t *testing.T) {
	const n = 4000
	for _, p := range []Params{AltaVista(), Bing(), Banding(4, 8), {R: 3, B: 7, M: 3}} {
		s := MustNew(p)
		st := rng.New(rng.Key(1, uint64(p.R), uint64(p.B)))
		a, b := make([]uint64, p.K()), make([]uint64, p.K())
		var ka, kb []uint64
		for _, j := range []float64{0.6, 0.8, 0.9, 0.95} {
			hits := 0
			for trial := 0; trial < n; trial++ {
				pairSamples(&st, a, b, j)
				ka, _ = s.Keys(ka[:0], a)
				kb, _ = s.Keys(kb[:0], b)
				for c := range ka {
					if ka[c] == kb[c] {
						hits++
						break
					}
				}
			}
			want := p.Prob(j)
			got := float64(hits) / n
			if bound := 4*math.Sqrt(want*(1-want)/n) + 1.0/n; math.Abs(got-want) > bound {
				t.Errorf("%v J=%v: collision rate %.4f, Prob %.4f (bound %.4f)", p, j, got, want, bound)
			}
		}
	}
}

// TestKeysMofB checks the combination rule exactly: documents agreeing on a
// chosen set of a bands share exactly C(a, m) keys, namely those whose bands
// all lie in the set.
func TestKeysMofB(t *testing.T) {
	for _, p := range []Params{AltaVista(), Bing(), Banding(2, 5), {R: 2, B: 7, M: 3}} {
		s := MustNew(p)
		st := rng.New(7)
		a := make([]uint64, p.K())
		b := make([]uint64, p.K())
		for mask := 0; mask < 1<<p.B; mask++ {
			for i := range a {
				a[i] = st.Uint64()
				b[i] = st.Uint64()
			}
			agree := 0
			for band := 0; band < p.B; band++ {
				if mask>>band&1 == 1 {
					copy(b[band*p.R:(band+1)*p.R], a[band*p.R:(band+1)*p.R])
					agree++
				}
			}
			sa, _ := s.Supershingles(nil, a)
			sb, _ := s.Supershingles(nil, b)
			if got := s.Agreements(sa, sb); got != agree && p.KeyBits == 0 {
				t.Fatalf("%v mask %b: %d agreements, want %d", p, mask, got, agree)
			}
			ka, _ := s.Keys(nil, a)
			kb, _ := s.Keys(nil, b)
			shared := 0
			for c := range ka {
				inSet := true
				for _, band := range s.Combination(c) {
					inSet = inSet && mask>>band&1 == 1
				}
				if (ka[c] == kb[c]) != inSet && (p.KeyBits == 0 || p.KeyBits == 64) {
					t.Fatalf("%v mask %b combination %v: shared=%v", p, mask, s.Combination(c), ka[c] == kb[c])
				}
				if ka[c] == kb[c] {
					shared++
				}
			}
			if want := int(binomial(agree, p.M)); shared < want {
				t.Fatalf("%v mask %b: %d shared keys, want >= %d", p, mask, shared, want)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	bad := []Params{{}, {R: 1, B: 0, M: 1}, {R: 1, B: 65, M: 1}, {R: 1, B: 4, M: 5}, {R: 1, B: 64, M: 32}, {R: 1, B: 2, M: 1, KeyBits: 65}}
	for _, p := range bad {
		if err := p.Validate(); !errors.Is(err, ErrParams) {
			t.Errorf("%+v: Validate = %v, want ErrParams", p, err)
		}
		if _, err := New(p); err == nil {
			t.Errorf("%+v: New succeeded", p)
		}
	}
	s := MustNew(AltaVista())
	if _, err := s.Keys(nil, make([]uint64, 83)); !errors.Is(err, ErrShortSketch) {
		t.Errorf("short sketch: %v", err)
	}
}

func TestCombinationsLexicographic(t *testing.T) {
	s := MustNew(Params{R: 1, B: 5, M: 3})
	var got []string
	for c := 0; c < s.NumKeys(); c++ {
		got = append(got, fmt.Sprint(s.Combination(c)))
	}
	want := "[[0 1 2] [0 1 3] [0 1 4] [0 2 3] [0 2 4] [0 3 4] [1 2 3] [1 2 4] [1 3 4] [2 3 4]]"
	if fmt.Sprint(got) != want {
		t.Errorf("combinations %v, want %v", got, want)
	}
}

// TestGolden pins the keys: stored indexes depend on them.
func TestGolden(t *testing.T) {
	samples := make([]uint64, 84)
	st := rng.New(42)
	for i := range samples {
		samples[i] = st.Uint64()
	}
	out := map[string][]string{}
	for name, p := range map[string]Params{"altavista": AltaVista(), "bing": Bing(), "banding-4x8": Banding(4, 8), "altavista-seed9": {R: 14, B: 6, M: 2, Seed: 9}} {
		s := MustNew(p)
		ss, _ := s.Supershingles(nil, samples)
		keys, _ := s.Keys(nil, samples)
		for _, v := range ss {
			out[name+"/supershingles"] = append(out[name+"/supershingles"], fmt.Sprintf("%016x", v))
		}
		for _, v := range keys {
			out[name+"/keys"] = append(out[name+"/keys"], fmt.Sprintf("%016x", v))
		}
	}
	seg, _ := NewSegments(128, 3, 5)
	ks, _ := seg.Keys(nil, samples[:2])
	for _, v := range ks {
		out["segments-128-3/keys"] = append(out["segments-128-3/keys"], fmt.Sprintf("%016x", v))
	}
	got, _ := json.MarshalIndent(out, "", "  ")
	got = append(got, '\n')
	path := filepath.Join("testdata", "keys.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create)", err)
	}
	if string(got) != string(want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("keys differ from %s; see %s.got", path, path)
	}
}

func TestChoose(t *testing.T) {
	c, err := Choose(ChooseOptions{Threshold: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Params
	t.Logf("threshold 0.8: %v FP=%.5f FN=%.5f P(0.7)=%.4f P(0.8)=%.4f P(0.9)=%.4f", p, c.FP, c.FN, p.Prob(0.7), p.Prob(0.8), p.Prob(0.9))
	if p.K() > 256 || p.NumKeys() > 64 {
		t.Errorf("choice %v breaks the default limits", p)
	}
	// The S-curve must cross 1/2 near the threshold and be steep.
	if p.Prob(0.9) < 0.9 || p.Prob(0.65) > 0.1 {
		t.Errorf("choice %v: P(0.65)=%v P(0.9)=%v", p, p.Prob(0.65), p.Prob(0.9))
	}
	// Optimality: no scheme in the search space does better (spot-check a
	// sub-grid and the presets, restricted to the same limits).
	for b := 1; b <= 32; b += 3 {
		for m := 1; m <= b && binomial(b, m) <= 64; m++ {
			for r := 1; r*b <= 256; r += 2 {
				q := Params{R: r, B: b, M: m}
				fp, fn := q.Areas(0.8)
				if l := 0.5*fp + 0.5*fn; l < c.Loss-1e-12 {
					t.Fatalf("%v has loss %v < chosen %v", q, l, c.Loss)
				}
			}
		}
	}
	// Weights move the curve: a heavy FN weight lowers P's midpoint.
	cfn, _ := Choose(ChooseOptions{Threshold: 0.8, FNWeight: 0.9, FPWeight: 0.1})
	cfp, _ := Choose(ChooseOptions{Threshold: 0.8, FNWeight: 0.1, FPWeight: 0.9})
	if !(cfn.Params.Prob(0.75) > p.Prob(0.75) && cfp.Params.Prob(0.85) < p.Prob(0.85)) {
		t.Errorf("weights do not shift the curve: fn-heavy %v fp-heavy %v", cfn.Params, cfp.Params)
	}
	// A budget is respected.
	cb, err := Choose(ChooseOptions{Threshold: 0.8, BudgetBytes: 12, KeyBits: 16})
	if err != nil || cb.Params.Bytes() > 12 {
		t.Errorf("budget 12: %v %v", cb.Params, err)
	}
	if _, err := Choose(ChooseOptions{Threshold: 0.8, BudgetBytes: 4}); !errors.Is(err, ErrNoChoice) {
		t.Errorf("budget 4 with 64-bit keys: %v", err)
	}
	if _, err := Choose(ChooseOptions{Threshold: 1.2}); !errors.Is(err, ErrParams) {
		t.Errorf("threshold 1.2: %v", err)
	}
}

func BenchmarkKeys(b *testing.B) {
	for _, c := range []struct {
		name string
		p    Params
	}{{"altavista", AltaVista()}, {"bing", Bing()}, {"banding-8x16", Banding(8, 16)}} {
		b.Run(c.name, func(b *testing.B) {
			s := MustNew(c.p)
			samples := make([]uint64, c.p.K())
			st := rng.New(1)
			for i := range samples {
				samples[i] = st.Uint64()
			}
			dst := make([]uint64, 0, s.NumKeys())
			b.ReportAllocs()
			b.SetBytes(int64(8 * len(samples)))
			for b.Loop() {
				dst, _ = s.Keys(dst[:0], samples)
			}
		})
	}
}

func BenchmarkChoose(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Choose(ChooseOptions{Threshold: 0.8})
	}
}
