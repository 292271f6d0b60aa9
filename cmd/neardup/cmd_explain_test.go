package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/feature"
)

var licensesDocs = filepath.Join("..", "..", "testdata", "licenses", "docs.jsonl.gz")

// A real near-duplicate pair of the sample corpus, from pairs.jsonl.gz:
// exact Jaccard 0.907348, 284 shared shingles of 298 and 299.
const (
	explainA = "debian-copyright/alsa-topology-conf"
	explainB = "debian-copyright/alsa-ucm-conf"
)

// explainOpts parses args with explain's flags and their defaults.
func explainOpts(t *testing.T, a, b string, args ...string) explainOptions {
	t.Helper()
	var o explainOptions
	cmd := &cobra.Command{}
	bindExplainFlags(cmd, &o)
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	o.A, o.B = a, b
	return o
}

func runExplainJSON(t *testing.T, o explainOptions) explainResult {
	t.Helper()
	o.JSON = true
	var out, errb bytes.Buffer
	if err := runExplain(context.Background(), &Env{Stdout: &out, Stderr: &errb}, o); err != nil {
		t.Fatalf("runExplain: %v (stderr %s)", err, errb.String())
	}
	var r explainResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	return r
}

// TestExplainLicensePair explains the ground-truth pair under two schemes
// and checks every part against an independent computation: the exact
// Jaccard against pairs.jsonl.gz, the estimate against its standard error,
// the band agreements against the listed keys (a key collides exactly when
// all bands of its combination agree, so C(agreements, m) keys collide),
// and the shared shingles against both documents' normalized text.
func TestExplainLicensePair(t *testing.T) {
	for _, lshFlag := range []string{"auto", "altavista", "bing", "4,8,3"} {
		r := runExplainJSON(t, explainOpts(t, explainA, explainB, "--corpus", licensesDocs, "--lsh", lshFlag, "--shared", "-1", "--keys", "-1"))
		if math.Abs(r.Exact-0.907348) > 1e-6 || r.Shared != 284 || r.A.Features != 298 || r.B.Features != 299 || r.Union != 313 {
			t.Fatalf("%s: exact %v shared %d of %d (%d, %d features), want 0.907348 and 284", lshFlag, r.Exact, r.Shared, r.Union, r.A.Features, r.B.Features)
		}
		// The estimate is within 4 standard errors of the truth (a bound a
		// correct estimator misses with probability < 1e-4 at this seed).
		if r.StdErr <= 0 || math.Abs(r.Estimate-r.Exact) > 4*r.StdErr {
			t.Errorf("%s: estimate %v ± %v far from %v", lshFlag, r.Estimate, r.StdErr, r.Exact)
		}
		if math.Abs(r.Estimate-float64(r.Agreeing)/float64(r.Samples)) > 1e-12 {
			t.Errorf("%s: estimate %v is not %d/%d agreeing samples", lshFlag, r.Estimate, r.Agreeing, r.Samples)
		}
		if !r.Duplicate {
			t.Errorf("%s: not a duplicate at 0.8", lshFlag)
		}
		if len(r.Bands) != r.Params.B || r.Params.K() > 128 {
			t.Fatalf("%s: %d bands for %v", lshFlag, len(r.Bands), r.Params)
		}
		agree := map[int]bool{}
		n, agreeingSamples := 0, 0
		for _, b := range r.Bands {
			if b.Match != (b.A == b.B) {
				t.Errorf("%s: band %d match %v but %s vs %s", lshFlag, b.Band, b.Match, b.A, b.B)
			}
			if b.Match && b.Agreeing != b.Samples[1]-b.Samples[0] {
				t.Errorf("%s: band %d matches with only %d agreeing samples", lshFlag, b.Band, b.Agreeing)
			}
			agree[b.Band] = b.Match
			if b.Match {
				n++
			}
			agreeingSamples += b.Agreeing
		}
		if n != r.Agreements || agreeingSamples > r.Agreeing {
			t.Errorf("%s: %d matching bands, reported %d", lshFlag, n, r.Agreements)
		}
		want := int(math.Round(binom(n, r.M)))
		if r.KeysTotal != want || len(r.Keys) != want {
			t.Errorf("%s: %d (%d listed) keys collided, want C(%d, %d) = %d", lshFlag, r.KeysTotal, len(r.Keys), n, r.M, want)
		}
		for _, k := range r.Keys {
			if len(k.Bands) != r.M {
				t.Errorf("%s: key %d has %d bands", lshFlag, k.Key, len(k.Bands))
			}
			for _, b := range k.Bands {
				if !agree[b] {
					t.Errorf("%s: key %d collided but band %d differs", lshFlag, k.Key, b)
				}
			}
		}
		if r.Candidate != (want > 0) || r.Candidate != (n >= r.M) {
			t.Errorf("%s: candidate %v with %d of m = %d bands", lshFlag, r.Candidate, n, r.M)
		}
		if p := r.Params.Prob(r.Exact); math.Abs(p-r.Prob) > 1e-12 {
			t.Errorf("%s: prob %v, want %v", lshFlag, r.Prob, p)
		}
		if len(r.SharedShingles) != 284 {
			t.Fatalf("%s: %d shared shingles listed, want all 284", lshFlag, len(r.SharedShingles))
		}
	}
	// Every shared shingle is five consecutive words of both documents'
	// normalized texts.
	ta, tb := normalizedLicense(t, explainA), normalizedLicense(t, explainB)
	r := runExplainJSON(t, explainOpts(t, explainA, explainB, "--corpus", licensesDocs, "--shared", "10"))
	if len(r.SharedShingles) != 10 {
		t.Fatalf("%d shared shingles, want 10", len(r.SharedShingles))
	}
	for _, s := range r.SharedShingles {
		if len(strings.Fields(s)) != 5 || !strings.Contains(" "+ta+" ", " "+s+" ") || !strings.Contains(" "+tb+" ", " "+s+" ") {
			t.Errorf("shared shingle %q is not in both texts", s)
		}
	}
}

func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// normalizedLicense returns a license document's normalized text.
func normalizedLicense(t *testing.T, id string) string {
	t.Helper()
	a, _, err := compareDocs(&Env{}, compareOptions{A: id, B: id, Corpus: licensesDocs, Fields: featCorpusFlags{IDField: "id", TextField: "text"}})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := feature.New(feature.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return string(ex.Normalize(nil, a.Body))
}

// TestExplainFiles explains two files: a document and a copy with one
// word changed, so that the exact Jaccard is known by counting shingles.
func TestExplainFiles(t *testing.T) {
	dir := t.TempDir()
	var words []string
	for i := 0; i < 200; i++ {
		words = append(words, "w"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	a := strings.Join(words, " ")
	words[100] = "changed"
	b := strings.Join(words, " ")
	pa, pb := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if err := os.WriteFile(pa, []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	// 196 shingles each; the 5 covering word 100 differ: 191 shared of 201.
	r := runExplainJSON(t, explainOpts(t, pa, pb))
	if r.Shared != 191 || r.Union != 201 || math.Abs(r.Exact-191.0/201) > 1e-12 {
		t.Fatalf("shared %d of %d, J %v; want 191 of 201", r.Shared, r.Union, r.Exact)
	}
	if r.A.ID != pa || len(r.SharedShingles) != 20 {
		t.Fatalf("id %q, %d shared shingles", r.A.ID, len(r.SharedShingles))
	}
	// The text output names the parts.
	var out bytes.Buffer
	o := explainOpts(t, pa, pb, "--lsh", "altavista")
	if err := runExplain(context.Background(), &Env{Stdout: &out, Stderr: &out}, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exact Jaccard      0.9502", "estimated Jaccard", "k=84 r=14 b=6 m=2", "supershingles agree", "shared features (first 20 of 191"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestExplainEmptyAndUsage: an empty document has no keys; bad flags are
// usage errors.
func TestExplainEmptyAndUsage(t *testing.T) {
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a.txt"), filepath.Join(dir, "empty.txt")
	os.WriteFile(pa, []byte("one two three four five six"), 0o644)
	os.WriteFile(pb, nil, 0o644)
	r := runExplainJSON(t, explainOpts(t, pa, pb))
	if r.Candidate || r.KeysTotal != 0 || r.Exact != 0 {
		t.Fatalf("empty document: candidate %v keys %d J %v", r.Candidate, r.KeysTotal, r.Exact)
	}
	bad := []explainOptions{
		explainOpts(t, pa, pb, "--sampler", "icws"),
		explainOpts(t, pa, pb, "--sampler", "bottomk"),
		explainOpts(t, pa, pb, "--lsh", "altavista", "--k", "64"),
		explainOpts(t, pa, pb, "--lsh", "3,x"),
		explainOpts(t, pa, pb, "--threshold", "1.5"),
		explainOpts(t, "no-such-id", explainB, "--corpus", licensesDocs),
	}
	for i, o := range bad {
		err := runExplain(context.Background(), &Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}, o)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("case %d: err = %v, want a usage error", i, err)
		}
	}
}
