package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagVocabularyEveryCommand walks every command and checks the one flag
// vocabulary: --json on every command that prints a result, --shingle for
// words per shingle (no -k shorthand), --k for samples, --seed beside
// --feature-seed (no visible --sketch-seed), -o always a directory, and
// --format the input format wherever a corpus is read.
func TestFlagVocabularyEveryCommand(t *testing.T) {
	env, _, _ := testEnv()
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.Runnable() || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		n++
		name := c.CommandPath()
		fl := c.Flags()
		visible := func(f string) *pflag.Flag {
			if x := fl.Lookup(f); x != nil && x.Deprecated == "" && !x.Hidden {
				return x
			}
			return nil
		}
		if visible("json") == nil && c.Name() != "serve" { // serve prints no result: it serves
			t.Errorf("%s: no --json", name)
		}
		if f := visible("k"); f != nil && !strings.Contains(f.Usage, "samples") && !strings.Contains(f.Usage, "sample") {
			t.Errorf("%s: --k is %q, not the samples", name, f.Usage)
		}
		if f := visible("shingle"); f != nil {
			if !strings.Contains(f.Usage, "words per shingle") || f.Shorthand != "" && fl.ShorthandLookup(f.Shorthand).ShorthandDeprecated == "" {
				t.Errorf("%s: --shingle %q, shorthand %q", name, f.Usage, f.Shorthand)
			}
			if visible("feature-seed") == nil {
				t.Errorf("%s: --shingle without --feature-seed", name)
			}
		}
		if visible("sketch-seed") != nil {
			t.Errorf("%s: --sketch-seed visible (the flag is --seed)", name)
		}
		if f := visible("out"); f != nil && f.Shorthand == "o" && !strings.Contains(strings.ToLower(f.Usage), "dir") {
			t.Errorf("%s: -o is %q, not a directory", name, f.Usage)
		}
		if f := fl.Lookup("o"); f != nil {
			t.Errorf("%s: a flag named o", name)
		}
		if visible("text-field") != nil {
			if f := visible("format"); f == nil || !strings.HasPrefix(f.Usage, "input format") {
				t.Errorf("%s reads a corpus without --format as the input format", name)
			}
		}
	}
	walk(NewRootCmd(env))
	if n < 18 {
		t.Errorf("walked %d commands", n)
	}
}

// TestDedupStdoutAgreesWithSummary: every figure dedup prints is the one
// summary.json holds, and --json prints summary.json byte for byte.
func TestDedupStdoutAgreesWithSummary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	env, stdout, errb := testEnv()
	if code := Main(context.Background(), []string{"dedup", "-q", "--store", "memory", "-o", out, sampleCorpus}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s dedup.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("read %d: kept %d, duplicates %d (%d identical, %d near), rejected %d\n%d verified pairs in %d clusters (largest %d); %d candidates checked; %s k=%d J >= %g, lsh k=%d r=%d b=%d m=%d keybits=%d\n",
		s.Read, s.Kept, s.Duplicates, s.Exact, s.Near, s.Rejected, s.Pairs, s.Clusters, s.Largest, s.Candidates, s.Config.Sampler, s.Config.K, s.Config.Threshold,
		s.Config.LSH.R*s.Config.LSH.B, s.Config.LSH.R, s.Config.LSH.B, s.Config.LSH.M, s.Config.LSH.KeyBits)
	if !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("stdout\n%s\nsummary.json says\n%s", stdout, want)
	}
	out2 := filepath.Join(t.TempDir(), "out")
	env, stdout, _ = testEnv()
	if code := Main(context.Background(), []string{"dedup", "-q", "--json", "--store", "memory", "-o", out2, sampleCorpus}, env); code != ExitOK {
		t.Fatal(code)
	}
	if b, _ := os.ReadFile(filepath.Join(out2, "summary.json")); !bytes.Equal(stdout.Bytes(), b) {
		t.Errorf("--json prints\n%s\nsummary.json holds\n%s", stdout, b)
	}
}

// --json on the commands whose output is JSON Lines anyway prints the
// same lines; on sketch it excludes --output-format binary.
func TestJSONOnJSONLinesCommands(t *testing.T) {
	for _, args := range [][]string{{"features"}, {"sketch"}} {
		var outs []string
		for _, extra := range [][]string{nil, {"--json"}} {
			env, stdout, errb := testEnv()
			a := append(append(append([]string{}, args...), extra...), sampleCorpus)
			if code := Main(context.Background(), a, env); code != ExitOK {
				t.Fatalf("%v: exit %d: %s", a, code, errb)
			}
			outs = append(outs, stdout.String())
		}
		if outs[0] != outs[1] || strings.Count(outs[0], "\n") != 474 {
			t.Errorf("%v: --json changes the output (%d lines)", args, strings.Count(outs[0], "\n"))
		}
	}
	env, _, _ := testEnv()
	if code := Main(context.Background(), []string{"sketch", "--json", "--output-format", "binary", sampleCorpus}, env); code != ExitUsage {
		t.Errorf("sketch --json --output-format binary: exit %d", code)
	}
}
