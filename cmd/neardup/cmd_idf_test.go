package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/feature"
)

func TestRunIDFBuildAndShow(t *testing.T) {
	path := featCorpus(t)
	out := filepath.Join(t.TempDir(), "idf.bin")
	env, stdout, _ := featTestEnv()
	ff, cf := featFlagsFor(t, false, "--shingle", "3")
	if err := runIDFBuild(context.Background(), env, idfBuildOptions{Paths: []string{path}, Out: out, Feature: ff, Corpus: cf, MinDF: 1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "3 documents") {
		t.Fatalf("summary %q", stdout)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := feature.ReadIDF(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	o := feature.Options{K: 3}
	e, _ := feature.New(o)
	shared := e.Extract(nil, []byte("the quick brown"))[0].ID // in docs a and b
	if tab.Docs() != 3 || tab.DF(shared) != 2 || tab.FeatureConfig() != o.IDHash() {
		t.Fatalf("docs %d df %d config %016x", tab.Docs(), tab.DF(shared), tab.FeatureConfig())
	}
	all := tab.Len()

	// --min-df 2 keeps only shared shingles.
	env, _, _ = featTestEnv()
	if err := runIDFBuild(context.Background(), env, idfBuildOptions{Paths: []string{path}, Out: out, Feature: ff, Corpus: cf, MinDF: 2}); err != nil {
		t.Fatal(err)
	}
	env, stdout, _ = featTestEnv()
	if err := runIDFShow(context.Background(), env, idfShowOptions{Path: out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "3 documents") || strings.Contains(stdout.String(), " "+strconv.Itoa(all)+" features") {
		t.Fatalf("show after --min-df 2: %q (all: %d)", stdout, all)
	}

	// Corrupt tables are reported, never used.
	data, _ := os.ReadFile(out)
	data[len(data)/2] ^= 1
	bad := featWrite(t, filepath.Join(t.TempDir(), "bad.bin"), string(data))
	env, _, _ = featTestEnv()
	if err := runIDFShow(context.Background(), env, idfShowOptions{Path: bad}); !errors.Is(err, feature.ErrIDFFormat) {
		t.Fatalf("corrupt table: %v", err)
	}
}

func TestRunIDFBuildUsage(t *testing.T) {
	env, _, _ := featTestEnv()
	ff, cf := featFlagsFor(t, false)
	var ue *UsageError
	if err := runIDFBuild(context.Background(), env, idfBuildOptions{Paths: []string{"x"}, Feature: ff, Corpus: cf}); !errors.As(err, &ue) {
		t.Fatalf("missing --out: %v", err)
	}
	env, _, errb := featTestEnv()
	if code := Main(context.Background(), []string{"idf", "show"}, env); code != ExitUsage {
		t.Fatalf("idf show without a file: exit %d (%s)", code, errb)
	}
}
