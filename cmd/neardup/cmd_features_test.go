package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/feature"
)

func featTestEnv() (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, &out, &errb
}

func featWrite(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// featFlagsFor parses args with the real flag definitions, so tests get the
// same defaults as the command line.
func featFlagsFor(t *testing.T, withWeights bool, args ...string) (featFlags, featCorpusFlags) {
	t.Helper()
	var f featFlags
	var c featCorpusFlags
	cmd := &cobra.Command{Use: "x"}
	f.bind(cmd, withWeights)
	c.bind(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return f, c
}

const (
	docA = "The quick brown fox jumps over the lazy dog while the cat watches from the warm windowsill"
	docB = "The quick brown fox jumps over the lazy dog while the cat sleeps on the warm windowsill"
	docC = "Completely different words appear in this third document about gardening and tomatoes"
)

func featCorpus(t *testing.T) string {
	dir := t.TempDir()
	var b strings.Builder
	for i, d := range []string{docA, docB, docC} {
		line, _ := json.Marshal(map[string]string{"id": []string{"a", "b", "c"}[i], "text": d})
		b.Write(line)
		b.WriteByte('\n')
	}
	return featWrite(t, filepath.Join(dir, "docs.jsonl"), b.String())
}

type featLine struct {
	ID       string `json:"id"`
	Features []struct {
		ID     string  `json:"id"`
		Weight float64 `json:"weight"`
		Text   *string `json:"text"`
	} `json:"features"`
}

func parseFeatLines(t *testing.T, out string) map[string]featLine {
	t.Helper()
	m := map[string]featLine{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var fl featLine
		if err := json.Unmarshal([]byte(l), &fl); err != nil {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		m[fl.ID] = fl
	}
	return m
}

func TestRunFeatures(t *testing.T) {
	path := featCorpus(t)
	env, out, errb := featTestEnv()
	ff, cf := featFlagsFor(t, true)
	if err := runFeatures(context.Background(), env, featuresOptions{Paths: []string{path}, Feature: ff, Corpus: cf, Text: true}); err != nil {
		t.Fatal(err)
	}
	got := parseFeatLines(t, out.String())
	if len(got) != 3 {
		t.Fatalf("want 3 documents, got %d: %s", len(got), out)
	}
	e, _ := feature.New(feature.Options{})
	for id, text := range map[string]string{"a": docA, "b": docB, "c": docC} {
		want := e.Extract(nil, []byte(text))
		fl := got[id]
		if len(fl.Features) != len(want) {
			t.Fatalf("%s: %d features, library gives %d", id, len(fl.Features), len(want))
		}
		for i, f := range fl.Features {
			if f.ID != string(featHex16(nil, want[i].ID)) || f.Weight != 1 {
				t.Fatalf("%s feature %d: %+v, want %016x", id, i, f, want[i].ID)
			}
			if f.Text == nil || len(strings.Fields(*f.Text)) != 5 {
				t.Fatalf("%s feature %d: text %v", id, i, f.Text)
			}
		}
	}
	if !strings.Contains(errb.String(), "read 3, yielded 3, rejected 0") {
		t.Fatalf("summary missing: %q", errb)
	}
	// Without --text there is no text field.
	env, out, _ = featTestEnv()
	ff, cf = featFlagsFor(t, true, "--unit", "word", "--weight", "count")
	if err := runFeatures(context.Background(), env, featuresOptions{Paths: []string{path}, Feature: ff, Corpus: cf}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), `"text"`) {
		t.Fatal("text printed without --text")
	}
	for _, f := range parseFeatLines(t, out.String())["a"].Features {
		if f.Weight != 1 && f.Weight != 4 { // "the" occurs 4 times in docA
			t.Fatalf("word count weight %v", f.Weight)
		}
	}
}

func TestRunFeaturesHTMLAndChars(t *testing.T) {
	dir := t.TempDir()
	page := featWrite(t, filepath.Join(dir, "p.html"), `<html><head><title>Hello</title><script>var hidden=1</script></head><body><p>World wide</p></body></html>`)
	env, out, _ := featTestEnv()
	ff, cf := featFlagsFor(t, true, "--unit", "word")
	if err := runFeatures(context.Background(), env, featuresOptions{Paths: []string{page}, Feature: ff, Corpus: cf, Text: true}); err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, fl := range parseFeatLines(t, out.String()) {
		for _, f := range fl.Features {
			words = append(words, *f.Text)
		}
	}
	if strings.Join(words, " ") != "hello world wide" {
		t.Fatalf("HTML words %q", words)
	}
	env, out, _ = featTestEnv()
	ff, cf = featFlagsFor(t, true, "--char-ngrams", "3")
	if err := runFeatures(context.Background(), env, featuresOptions{Paths: []string{page}, Feature: ff, Corpus: cf, Text: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"text":"o w"`) {
		t.Fatalf("char 3-grams missing \"o w\": %s", out)
	}
}

func TestRunFeaturesTFIDF(t *testing.T) {
	path := featCorpus(t)
	// A first pass over the inputs when no table is given.
	env, out, _ := featTestEnv()
	ff, cf := featFlagsFor(t, true, "--weight", "tfidf", "--sublinear-tf")
	if err := runFeatures(context.Background(), env, featuresOptions{Paths: []string{path}, Feature: ff, Corpus: cf}); err != nil {
		t.Fatal(err)
	}
	inline := out.String()
	a := parseFeatLines(t, inline)["a"]
	var shared, own float64
	for i, f := range a.Features {
		switch i {
		case 0: // "the quick brown fox jumps" is in a and b
			shared = f.Weight
		case len(a.Features) - 1: // "watches from the warm windowsill" only in a
			own = f.Weight
		}
	}
	if !(own > shared && shared > 0) {
		t.Fatalf("tf-idf: own %v, shared %v", own, shared)
	}
	// The same with a stored table.
	tab := filepath.Join(t.TempDir(), "idf.bin")
	env, _, _ = featTestEnv()
	bf, bc := featFlagsFor(t, false)
	if err := runIDFBuild(context.Background(), env, idfBuildOptions{Paths: []string{path}, Out: tab, Feature: bf, Corpus: bc, MinDF: 1}); err != nil {
		t.Fatal(err)
	}
	env, out, _ = featTestEnv()
	ff, cf = featFlagsFor(t, true, "--weight", "tfidf", "--sublinear-tf", "--idf", tab)
	if err := runFeatures(context.Background(), env, featuresOptions{Paths: []string{path}, Feature: ff, Corpus: cf}); err != nil {
		t.Fatal(err)
	}
	if out.String() != inline {
		t.Fatal("stored table and corpus pass give different weights")
	}
	// A table built with other feature flags is refused.
	env, _, _ = featTestEnv()
	ff, cf = featFlagsFor(t, true, "--weight", "tfidf", "--shingle", "3", "--idf", tab)
	err := runFeatures(context.Background(), env, featuresOptions{Paths: []string{path}, Feature: ff, Corpus: cf})
	var ue *UsageError
	if !errors.As(err, &ue) || !errors.Is(err, feature.ErrConfigMismatch) {
		t.Fatalf("mismatched table: %v", err)
	}
}

func TestRunFeaturesUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--weight", "bm25"},
		{"--case", "upper"},
		{"--digits", "roman"},
		{"--idf", "x.bin"}, // needs --weight tfidf
		{"--unit", "word", "--char-ngrams", "3"},
		{"--words", "--char-ngrams", "3"},
		{"--unit", "sentence"},
		{"--norm", "nfd"},
		{"--punct", "yes"},
		{"--char-ngrams", "-2"},
		{"--shingle", "100"},
		{"--title-boost", "0.5", "--weight", "count"},
		{"--weight", "tfidf"}, // on stdin without a table
	} {
		env, _, _ := featTestEnv()
		ff, cf := featFlagsFor(t, true, args...)
		err := runFeatures(context.Background(), env, featuresOptions{Paths: nil, Feature: ff, Corpus: cf})
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
	}
}

func TestFeaturesCommandLine(t *testing.T) {
	path := featCorpus(t)
	env, out, errb := featTestEnv()
	if code := Main(context.Background(), []string{"features", "-k", "3", path}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Fatalf("%d lines", n)
	}
	// -k, the old shorthand of --shingle, still works with a warning on
	// stderr (never on stdout).
	if !strings.Contains(errb.String(), "-k has been deprecated, use --shingle") || strings.Contains(out.String(), "deprecated") {
		t.Errorf("no deprecation warning on stderr: %q", errb.String())
	}
	for _, k := range []string{"0", "-1"} {
		env, _, errb = featTestEnv()
		if code := Main(context.Background(), []string{"features", "--shingle", k, path}, env); code != ExitUsage || !strings.Contains(errb.String(), "want at least 1") {
			t.Errorf("--shingle %s: exit %d: %s", k, code, errb)
		}
	}
	env, _, _ = featTestEnv()
	if code := Main(context.Background(), []string{"features", "--weight", "nope", path}, env); code != ExitUsage {
		t.Fatalf("bad flag value: exit %d, want %d", code, ExitUsage)
	}
}
