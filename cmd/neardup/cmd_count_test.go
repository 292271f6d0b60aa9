package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/feature"
)

func countOpts(t *testing.T, files []string, args ...string) countOptions {
	sf, ff, cf := skFlagsFor(t, "bottomk", 1024, false, false, args...)
	return countOptions{Files: files, HLLPrecision: 14, Workers: 2, Sampler: sf, Feature: ff, Corpus: cf}
}

func runCountJSON(t *testing.T, opts countOptions) countResult {
	t.Helper()
	env, out, errb := featTestEnv()
	opts.JSON = true
	if err := runCount(context.Background(), env, opts); err != nil {
		t.Fatalf("%v (stderr %s)", err, errb)
	}
	var r countResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	return r
}

// TestRunCountLicenses checks count on the licences corpus against an
// oracle computed here: distinct normalized texts (as strings, not
// fingerprints) and distinct feature ids.
//
// Bounds. Bottom-k with k = 1024: the corpus has fewer than k distinct
// documents, so the bottom-k union holds them all and the count is exact;
// for shingles the estimator (k−1)/U_(k) has relative standard error
// 1/sqrt(k−2) ≈ 3.1% (Cohen–Kaplan; book ch. 3), and we allow 4 of them.
// OPH with k = 1024: the censored-minimum estimate has relative standard
// error about 1/sqrt(k) ≈ 3.1% when n ≫ k; 4 of them again. Flajolet–Martin
// (minhash, k = 256) on the documents: 1/mean(min) − 1 has relative standard
// error about 1/sqrt(k) = 6.25%; 4 of them. HyperLogLog with p = 14: 1.04/
// sqrt(2^14) ≈ 0.81%; 4 of them. Fixed seeds make all of it deterministic.
func TestRunCountLicenses(t *testing.T) {
	docs := licenseDocs(t)
	ex, err := feature.New(feature.Options{})
	if err != nil {
		t.Fatal(err)
	}
	texts, ids := map[string]bool{}, map[uint64]bool{}
	for _, d := range docs {
		texts[string(ex.Normalize(nil, d.Body))] = true
		for _, f := range ex.Extract(nil, d.Body) {
			ids[f.ID] = true
		}
	}
	wantDocs, wantShingles := len(texts), len(ids)

	r := runCountJSON(t, func() countOptions { o := countOpts(t, []string{licensesPath}); o.Exact = true; return o }())
	if r.Documents != 474 || r.Exact == nil || r.Exact.DistinctDocuments != wantDocs || r.Exact.DistinctShingles != wantShingles {
		t.Fatalf("exact counts %+v, oracle %d documents, %d shingles", r.Exact, wantDocs, wantShingles)
	}
	if r.Sketch.DistinctDocuments != float64(wantDocs) {
		t.Errorf("bottom-k distinct documents %v, want exactly %d (fewer than k)", r.Sketch.DistinctDocuments, wantDocs)
	}
	within := func(what string, got float64, want int, rel float64) {
		t.Helper()
		if math.Abs(got-float64(want)) > rel*float64(want) {
			t.Errorf("%s: %v, exact %d (bound ±%.1f%%)", what, got, want, 100*rel)
		}
	}
	within("bottomk shingles", r.Sketch.DistinctShingles, wantShingles, 4/math.Sqrt(1022))
	within("hll documents", float64(r.HLL.DistinctDocuments), wantDocs, 4*1.04/128)
	within("hll shingles", float64(r.HLL.DistinctShingles), wantShingles, 4*1.04/128)

	r = runCountJSON(t, countOpts(t, []string{licensesPath}, "--sampler", "oph", "--k", "1024"))
	within("oph shingles", r.Sketch.DistinctShingles, wantShingles, 4/math.Sqrt(1024))
	r = runCountJSON(t, countOpts(t, []string{licensesPath}, "--sampler", "minhash", "--k", "256", "--shingle", "1"))
	within("flajolet-martin documents", r.Sketch.DistinctDocuments, wantDocs, 4/math.Sqrt(256))
	if r.Exact != nil {
		t.Error("exact counts without --exact")
	}
}

// TestRunCountRawAndWorkers: documents that differ only in case, spacing
// and punctuation are one document normalized and distinct raw; results do
// not depend on the number of workers.
func TestRunCountRawAndWorkers(t *testing.T) {
	var b strings.Builder
	for i, text := range []string{"Hello World, this is it", "hello   world this is it", "HELLO world: this is it!", "something else entirely here", "Something else entirely here"} {
		line, _ := json.Marshal(map[string]any{"id": i, "text": text})
		b.Write(line)
		b.WriteByte('\n')
	}
	path := featWrite(t, filepath.Join(t.TempDir(), "d.jsonl"), b.String())
	norm := countOpts(t, []string{path})
	norm.Exact = true
	raw := norm
	raw.Raw = true
	rn, rr := runCountJSON(t, norm), runCountJSON(t, raw)
	if rn.Exact.DistinctDocuments != 2 || rn.Sketch.DistinctDocuments != 2 || rn.HLL.DistinctDocuments != 2 {
		t.Fatalf("normalized: %+v", rn)
	}
	if rr.Exact.DistinctDocuments != 5 || rr.Sketch.DistinctDocuments != 5 || rr.HLL.DistinctDocuments != 5 {
		t.Fatalf("raw: %+v", rr)
	}
	if rn.Exact.DistinctShingles != 2 || rn.Sketch.DistinctShingles != 2 {
		t.Fatalf("shingles: %+v", rn)
	}

	one := countOpts(t, []string{licensesPath}, "--sampler", "superminhash", "--k", "128")
	one.Workers = 1
	three := one
	three.Workers = 3
	if r1, r3 := runCountJSON(t, one), runCountJSON(t, three); r1 != r3 {
		t.Fatalf("1 worker %+v, 3 workers %+v", r1, r3)
	}
}

func TestRunCountTextAndUsage(t *testing.T) {
	env, out, _ := featTestEnv()
	o := countOpts(t, []string{featCorpus(t)})
	o.Exact = true
	if err := runCount(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 documents read, 0 rejected", "sketch (bottomk k=1024)", "hyperloglog (p=14)", "distinct documents", "distinct shingles", "exact"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("missing %q in\n%s", want, out)
		}
	}
	// An empty corpus counts zero.
	r := runCountJSON(t, func() countOptions {
		o := countOpts(t, []string{featWrite(t, filepath.Join(t.TempDir(), "e.jsonl"), "")})
		o.Exact = true
		return o
	}())
	if r.Documents != 0 || r.Sketch.DistinctShingles != 0 || r.HLL.DistinctDocuments != 0 || r.Exact.DistinctShingles != 0 {
		t.Fatalf("empty corpus: %+v", r)
	}
	for i, o := range []countOptions{
		countOpts(t, nil, "--sampler", "icws"),
		countOpts(t, nil, "--sampler", "nope"),
		func() countOptions { o := countOpts(t, nil); o.HLLPrecision = 3; return o }(),
		func() countOptions { o := countOpts(t, nil); o.Workers = 0; return o }(),
	} {
		env, _, _ := featTestEnv()
		var ue *UsageError
		if err := runCount(context.Background(), env, o); !errors.As(err, &ue) {
			t.Errorf("case %d: want a usage error, got %v", i, err)
		}
	}
}

// Example_count counts the sample corpus: exact duplicates after
// normalization and distinct 5-shingles.
func Example_count() {
	env := &Env{Stdin: strings.NewReader(""), Stdout: new(bytes.Buffer), Stderr: io.Discard}
	Main(context.Background(), []string{"count", "--exact", licensesPath}, env)
	os.Stdout.Write(env.Stdout.(*bytes.Buffer).Bytes())
	// Output:
	// 474 documents read, 0 rejected
	//                     sketch (bottomk k=1024)  hyperloglog (p=14)  exact
	// distinct documents  469 ± 15                 469 ± 4             469  (sketch +0.0%, hll +0.0%)
	// distinct shingles   371084 ± 11608           368276 ± 2992       372335  (sketch -0.3%, hll -1.1%)
}

// TestKForEpsDelta: k = ceil(4/(eps² delta)), the lecture notes' bound
// (Chebyshev on the mean of k minima, Var <= 1/(k (n+1)²)); values outside
// (0, 1) are usage errors.
func TestKForEpsDelta(t *testing.T) {
	for _, c := range []struct {
		eps, delta float64
		k          int
	}{{0.1, 0.1, 4000}, {0.2, 0.25, 400}, {0.5, 0.5, 32}, {0.3, 0.05, 889}} {
		if k, err := kForEpsDelta(c.eps, c.delta); err != nil || k != c.k {
			t.Errorf("kForEpsDelta(%v, %v) = %d, %v; want %d", c.eps, c.delta, k, err, c.k)
		}
	}
	for _, c := range [][2]float64{{0, 0.1}, {0.1, 0}, {1, 0.5}, {0.1, 1}, {1e-4, 1e-4}} {
		if _, err := kForEpsDelta(c[0], c[1]); err == nil {
			t.Errorf("kForEpsDelta(%v, %v): no error", c[0], c[1])
		}
	}
}

// TestRunCountStderr: --eps 0.2 --delta 0.25 gives k = 400; every estimate
// comes with its standard error (n/sqrt(k) for minhash's Flajolet-Martin,
// 1.04 n/sqrt(2^p) for HyperLogLog), and on the licences corpus each
// estimate is within 4 standard errors of the exact count (Chebyshev: a
// miss has probability at most 1/16 per estimate; the seeds are fixed, so
// the test is deterministic).
func TestRunCountStderr(t *testing.T) {
	opts := countOpts(t, []string{licensesPath}, "--sampler", "minhash")
	opts.Eps, opts.Delta, opts.Exact = 0.2, 0.25, true
	r := runCountJSON(t, opts)
	if !strings.Contains(r.Sampler, "k=400") {
		t.Errorf("sampler %q, want k=400", r.Sampler)
	}
	for _, c := range []struct {
		name     string
		est, se  float64
		exact    int
		wantRelS float64
	}{
		{"sketch documents", r.Sketch.DistinctDocuments, r.Sketch.StderrDocuments, r.Exact.DistinctDocuments, 1 / math.Sqrt(400)},
		{"sketch shingles", r.Sketch.DistinctShingles, r.Sketch.StderrShingles, r.Exact.DistinctShingles, 1 / math.Sqrt(400)},
		{"hll documents", float64(r.HLL.DistinctDocuments), r.HLL.StderrDocuments, r.Exact.DistinctDocuments, 1.04 / 128},
		{"hll shingles", float64(r.HLL.DistinctShingles), r.HLL.StderrShingles, r.Exact.DistinctShingles, 1.04 / 128},
	} {
		if math.Abs(c.se/c.est-c.wantRelS) > 1e-9 {
			t.Errorf("%s: stderr %v of %v, want relative %v", c.name, c.se, c.est, c.wantRelS)
		}
		if math.Abs(c.est-float64(c.exact)) > 4*c.se {
			t.Errorf("%s: %v ± %v, exact %d: more than 4 standard errors off", c.name, c.est, c.se, c.exact)
		}
	}
	env, out, _ := featTestEnv()
	opts.JSON = false
	if err := runCount(context.Background(), env, opts); err != nil || strings.Count(out.String(), "±") != 4 {
		t.Errorf("text output (%v):\n%s\nwant 4 estimates with ±", err, out)
	}
}
