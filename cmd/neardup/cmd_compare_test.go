package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus/corpustest"
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/internal/rng"
)

// licensesDir is the shipped corpus with its ground truth.
var licensesDir = filepath.Join("..", "..", "testdata", "licenses")

// licensePairs returns pairs of the ground truth (pairs.jsonl.gz) spread
// over its Jaccard range: the lowest, quantiles, and an identical pair.
func licensePairs(t *testing.T, n int) []corpustest.Pair {
	t.Helper()
	all := corpustest.Pairs(t, licensesDir)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Jaccard < all[j].Jaccard })
	var out []corpustest.Pair
	for i := 0; i < n; i++ {
		out = append(out, all[i*(len(all)-1)/(n-1)])
	}
	return out
}

func compareOpts(t *testing.T, a, b string, args ...string) compareOptions {
	sf, ff, cf := skFlagsFor(t, "oph", 128, true, true, args...)
	return compareOptions{A: a, B: b, Sampler: sf, Feature: ff, Fields: cf}
}

func runCompareJSON(t *testing.T, opts compareOptions) compareResult {
	t.Helper()
	env, out, errb := featTestEnv()
	opts.JSON = true
	if err := runCompare(context.Background(), env, opts); err != nil {
		t.Fatalf("%v (stderr %s)", err, errb)
	}
	var r compareResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	return r
}

// TestRunCompareLicensePairs checks compare against the ground truth of the
// licences corpus: the exact Jaccard must equal pairs.jsonl.gz (rounded to 6
// decimals there), and the estimate must lie within 4 standard errors of it.
// Bound: the OPH and MinHash estimators are unbiased with standard deviation
// at most sqrt(J(1−J)/k) (OPH samples without replacement, so a little
// less; book ch. 3, sample package tests); |z| > 4 has probability 6e-5 per
// pair. The fixed seeds make the test deterministic.
func TestRunCompareLicensePairs(t *testing.T) {
	for _, sampler := range []string{"oph", "minhash"} {
		for _, p := range licensePairs(t, 6) {
			r := runCompareJSON(t, func() compareOptions {
				o := compareOpts(t, p.A, p.B, "--sampler", sampler, "--k", "256")
				o.Corpus = licensesPath
				return o
			}())
			if math.Abs(r.Exact-p.Jaccard) > 5e-7 {
				t.Errorf("%s ~ %s: exact %v, ground truth %v", p.A, p.B, r.Exact, p.Jaccard)
			}
			sd := math.Sqrt(p.Jaccard * (1 - p.Jaccard) / 256)
			if math.Abs(r.Estimate-r.Exact) > 4*sd+1e-12 {
				t.Errorf("%s %s ~ %s: estimate %v, exact %v (4 sd = %.4f)", sampler, p.A, p.B, r.Estimate, r.Exact, 4*sd)
			}
			if r.StdErr < 0 || r.StdErr > 0.5/math.Sqrt(256)+1e-12 {
				t.Errorf("stderr %v out of [0, 0.5/sqrt(k)]", r.StdErr)
			}
		}
	}
}

// shingleCounts is an independent oracle for the default features of plain
// ASCII text: lower-case words split on non-letters, 5-word shingles.
func shingleCounts(text string) map[string]float64 {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
	m := map[string]float64{}
	for i := 0; i+5 <= len(words); i++ {
		m[strings.Join(words[i:i+5], " ")]++
	}
	return m
}

// oracleJaccard returns Σmin/Σmax of two count maps (weighted), or of their
// key sets (unweighted).
func oracleJaccard(a, b map[string]float64, weighted bool) float64 {
	var num, den float64
	for k, x := range a {
		y := b[k]
		if !weighted {
			x, y = 1, math.Min(1, y)
		}
		num += math.Min(x, y)
		den += math.Max(x, y)
	}
	for k, y := range b {
		if _, ok := a[k]; !ok {
			if !weighted {
				y = 1
			}
			den += y
		}
	}
	return num / den
}

func TestRunCompareFilesAndWeighted(t *testing.T) {
	dir := t.TempDir()
	// Repeated phrases make counts differ from sets.
	textA := strings.Repeat(docA+" ", 3) + docC
	textB := docB + " " + docA + " " + strings.Repeat(docC+" ", 2)
	pa := featWrite(t, filepath.Join(dir, "a.txt"), textA)
	pb := featWrite(t, filepath.Join(dir, "b.txt"), textB)
	ca, cb := shingleCounts(textA), shingleCounts(textB)

	r := runCompareJSON(t, compareOpts(t, pa, pb, "--sampler", "superminhash", "--k", "512"))
	want := oracleJaccard(ca, cb, false)
	if math.Abs(r.Exact-want) > 1e-12 {
		t.Fatalf("exact %v, oracle %v", r.Exact, want)
	}
	// 4 standard deviations of an unbiased estimator with variance at
	// most J(1−J)/k (SuperMinHash's is at most MinHash's, Ertl 2017).
	if sd := math.Sqrt(want * (1 - want) / 512); math.Abs(r.Estimate-want) > 4*sd {
		t.Fatalf("estimate %v, exact %v, 4 sd %v", r.Estimate, want, 4*sd)
	}

	// Weighted: exact is Σmin/Σmax of the shingle counts; ICWS collides
	// with probability exactly that (book 5.2), variance J(1−J)/k; so do
	// CWS and its MMT 3.5 approximate-β variants (same distribution).
	for _, sampler := range []string{"icws", "cws", "cws-oblivious", "cws-unary"} {
		r = runCompareJSON(t, compareOpts(t, pa, pb, "--sampler", sampler, "--k", "512"))
		wantW := oracleJaccard(ca, cb, true)
		if math.Abs(r.Exact-wantW) > 1e-12 || math.Abs(wantW-want) < 0.01 {
			t.Fatalf("%s: weighted exact %v, oracle %v (unweighted %v)", sampler, r.Exact, wantW, want)
		}
		if sd := math.Sqrt(wantW * (1 - wantW) / 512); math.Abs(r.Estimate-wantW) > 4*sd {
			t.Fatalf("%s: estimate %v, exact %v, 4 sd %v", sampler, r.Estimate, wantW, 4*sd)
		}
	}

	// Text output, B from standard input.
	env, out, _ := featTestEnv()
	env.Stdin = strings.NewReader(textB)
	if err := runCompare(context.Background(), env, compareOpts(t, pa, "-")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "estimated Jaccard") || !strings.Contains(out.String(), "(oph k=128 b=64)") ||
		!strings.Contains(out.String(), "exact Jaccard") {
		t.Fatalf("text output:\n%s", out)
	}
	// HMT: weighted, and its own estimator.
	r = runCompareJSON(t, compareOpts(t, pa, pb, "--sampler", "hmt-dep", "--k", "256"))
	if math.Abs(r.Exact-oracleJaccard(ca, cb, true)) > 1e-12 || r.Estimate < 0 || r.Estimate > 1 {
		t.Fatalf("hmt: %+v", r)
	}
}

// TestRunCompareHMTBelowAlpha: when the total weights differ by more than
// 1/α, HMT answers "below α" (Algorithm 3.4) with the weight-ratio bound,
// in text and JSON. B is a near-duplicate of A five times over, so with
// count weights W_B ≈ 5·W_A and the ratio r = W_A/W_B ≈ 0.2 < α = 0.5. The
// bound is exact, not random: the sketch keeps log₂W, so r must match the
// oracle's totals to rounding, and r ≥ Σmin/Σmax (Σmin ≤ W_A, Σmax ≥ W_B).
func TestRunCompareHMTBelowAlpha(t *testing.T) {
	dir := t.TempDir()
	textA := docA + " " + docC
	textB := strings.Repeat(docB+" "+docC+" ", 5)
	pa := featWrite(t, filepath.Join(dir, "a.txt"), textA)
	pb := featWrite(t, filepath.Join(dir, "b.txt"), textB)
	ca, cb := shingleCounts(textA), shingleCounts(textB)
	var wa, wb float64
	for _, c := range ca {
		wa += c
	}
	for _, c := range cb {
		wb += c
	}
	ratio := wa / wb
	if ratio >= 0.5 {
		t.Fatalf("test documents: weight ratio %v not below α", ratio)
	}
	exact := oracleJaccard(ca, cb, true)

	for _, sampler := range []string{"hmt", "hmt-dep"} {
		opts := compareOpts(t, pa, pb, "--sampler", sampler, "--k", "64")
		env, out, _ := featTestEnv()
		opts.JSON = true
		if err := runCompare(context.Background(), env, opts); err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
			t.Fatalf("bad JSON %q: %v", out, err)
		}
		if raw["below_alpha"] != true || raw["alpha"] != 0.5 || raw["bound"] == nil {
			t.Fatalf("%s JSON: %s", sampler, out)
		}
		var r compareResult
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if math.Abs(*r.Bound-ratio) > 1e-9 || r.Estimate != *r.Bound || r.StdErr != 0 ||
			math.Abs(r.Exact-exact) > 1e-12 || *r.Bound < r.Exact-1e-12 {
			t.Fatalf("%s: %+v bound %v, want bound %v ≥ exact %v", sampler, r, *r.Bound, ratio, exact)
		}

		env, out, _ = featTestEnv()
		opts.JSON = false
		if err := runCompare(context.Background(), env, opts); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("estimated weighted Jaccard  below α=0.50 (weight ratio bound ≤ %.4f)  (%s k=", ratio, sampler)
		if !strings.Contains(out.String(), want) {
			t.Fatalf("text output:\n%s\nwant %q", out, want)
		}
	}

	// Equal weights: an estimate, alpha reported, no below_alpha nor bound.
	env, out, _ := featTestEnv()
	opts := compareOpts(t, pa, pa, "--sampler", "hmt", "--k", "64")
	opts.JSON = true
	if err := runCompare(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["below_alpha"]; ok || raw["bound"] != nil || raw["alpha"] != 0.5 || raw["estimate"] != 1.0 {
		t.Fatalf("identical documents: %s", out)
	}
}

// TestRunCompareBBitWeighted: --bits is allowed exactly for slot-wise
// samplers, so CWS/ICWS compress. For b = 8 the corrected estimator has
// standard deviation sqrt(Q(1−Q)/k)·2^b/(2^b−1) ≤ 1.004·0.5/sqrt(k)
// = 0.0157 at k = 1024; 4 of them is 0.063 (|z| > 4: probability 6e-5).
func TestRunCompareBBitWeighted(t *testing.T) {
	dir := t.TempDir()
	textA := strings.Repeat(docA+" ", 3) + docC
	textB := docB + " " + docA + " " + strings.Repeat(docC+" ", 2)
	pa := featWrite(t, filepath.Join(dir, "a.txt"), textA)
	pb := featWrite(t, filepath.Join(dir, "b.txt"), textB)
	want := oracleJaccard(shingleCounts(textA), shingleCounts(textB), true)
	for _, sampler := range []string{"icws", "cws", "cws-oblivious", "cws-unary"} {
		r := runCompareJSON(t, compareOpts(t, pa, pb, "--sampler", sampler, "--k", "1024", "--bits", "8"))
		if math.Abs(r.Estimate-want) > 0.063 || r.BelowAlpha || r.Alpha != 0 || r.Bound != nil {
			t.Fatalf("%s 8-bit: %+v, exact %v", sampler, r, want)
		}
	}
}

func TestRunCompareUsage(t *testing.T) {
	dir := t.TempDir()
	pa := featWrite(t, filepath.Join(dir, "a.txt"), docA)
	cases := []compareOptions{
		compareOpts(t, "-", "-"),
		compareOpts(t, pa, pa, "--weight", "count"), // oph ignores weights
		compareOpts(t, pa, pa, "--sampler", "nope"),
		func() compareOptions {
			o := compareOpts(t, "no/such/id", "npm/npm/node_modules/agent-base/LICENSE")
			o.Corpus = licensesPath
			return o
		}(),
	}
	for i, o := range cases {
		env, _, _ := featTestEnv()
		var ue *UsageError
		if err := runCompare(context.Background(), env, o); !errors.As(err, &ue) {
			t.Errorf("case %d: want a usage error, got %v", i, err)
		}
	}
	env, _, _ := featTestEnv()
	if err := runCompare(context.Background(), env, compareOpts(t, pa, filepath.Join(dir, "missing"))); err == nil {
		t.Error("missing file accepted")
	}
	if code := Main(context.Background(), []string{"compare", pa}, env); code != ExitUsage {
		t.Errorf("one argument: exit %d", code)
	}
}

// Example_compare compares two near-duplicate licences of the sample corpus.
func Example_compare() {
	env := &Env{Stdin: strings.NewReader(""), Stdout: new(bytes.Buffer), Stderr: io.Discard}
	Main(context.Background(), []string{"compare", "--corpus", licensesPath, "--sampler", "minhash", "--k", "256",
		"debian-copyright/alsa-topology-conf", "debian-copyright/alsa-ucm-conf"}, env)
	os.Stdout.Write(env.Stdout.(*bytes.Buffer).Bytes())
	// Output:
	// estimated Jaccard  0.8828 ± 0.0201  (minhash k=256 b=64)
	// exact Jaccard      0.9073  (298 and 299 features, 284 shared)
}

// TestExactJaccardIntersection: the intersection size derived from the
// index's exact Jaccard equals a direct count, for random sets up to 5000
// features.
func TestExactJaccardIntersection(t *testing.T) {
	s := rng.New(rng.Key(4))
	for trial := 0; trial < 300; trial++ {
		universe := 1 + s.Intn(5000)
		var a, b []feature.Feature
		inA := map[uint64]bool{}
		for id := uint64(0); id < universe; id++ {
			switch s.Intn(3) {
			case 0:
				a = append(a, feature.Feature{ID: id * 7919, Weight: 1})
				inA[id*7919] = true
			case 1:
				b = append(b, feature.Feature{ID: id * 7919, Weight: 1})
			default:
				a = append(a, feature.Feature{ID: id * 7919, Weight: 1})
				b = append(b, feature.Feature{ID: id * 7919, Weight: 1})
				inA[id*7919] = true
			}
		}
		for i := len(a) - 1; i > 0; i-- {
			k := s.Intn(uint64(i + 1))
			a[i], a[k] = a[k], a[i]
		}
		shared := 0
		for _, f := range b {
			if inA[f.ID] {
				shared++
			}
		}
		j, got := exactJaccard(a, b)
		want := float64(shared) / float64(len(a)+len(b)-shared)
		if got != shared || math.Abs(j-want) > 1e-15 {
			t.Fatalf("trial %d: J %v shared %d, want %v %d", trial, j, got, want, shared)
		}
	}
	if j, n := exactJaccard(nil, nil); j != 1 || n != 0 {
		t.Errorf("empty sets: %v %d", j, n)
	}
}
