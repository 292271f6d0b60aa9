package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// parse binds the command's flags on a fresh set and parses args.
func parse(t *testing.T, args ...string) options {
	t.Helper()
	var o options
	fs := flag.NewFlagSet("neardup-beam", flag.ContinueOnError)
	bind(fs, &o)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestRun runs the command on Prism over the shipped corpus and checks what
// it prints and writes.
func TestRun(t *testing.T) {
	out := t.TempDir()
	o := parse(t, "--input", "../../../testdata/licenses/docs.jsonl.gz", "--output", out, "--shards", "2")
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	got := stdout.String()
	for _, want := range []string{"read 474: kept 386, duplicates 88 (0 identical, 88 near), rejected 0", "16 clusters", "near_duplicates = 88"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, f := range []string{"summary.json", "kept/kept-00000.jsonl", "clusters/clusters-00001-of-00002.jsonl", "removed/removed-00000-of-00002.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestRunErrors checks that bad flags end in one error naming every
// problem, before any pipeline runs.
func TestRunErrors(t *testing.T) {
	o := parse(t, "--threshold", "1.5", "--k", "-1", "--sampler", "cws")
	err := run(context.Background(), o, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error")
	}
	msg := oneLine(err)
	for _, want := range []string{"no inputs", "no output directory", "threshold 1.5", "k = -1", "weighted"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || strings.Count(msg, "neardup-beam:") != 1 {
		t.Errorf("error is not one line: %q", msg)
	}
}

// TestRunFails checks that a pipeline failing on the runner (an input
// pattern that matches nothing) ends in one line naming the cause.
func TestRunFails(t *testing.T) {
	o := parse(t, "--input", filepath.Join(t.TempDir(), "*.jsonl"), "--output", t.TempDir())
	err := run(context.Background(), o, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error")
	}
	if msg := oneLine(err); !strings.HasPrefix(msg, "neardup-beam: no input matches ") || strings.Contains(msg, "\n") {
		t.Errorf("error %q", msg)
	}
}

// TestCounterLines: one line per counter name, summed over the steps that
// report it, and the shuffle total with its rate per document.
func TestCounterLines(t *testing.T) {
	got := strings.Join(counterLines(map[string]int64{"read": 4, "shuffle_bytes.ids": 100, "shuffle_bytes.clusters": 60, "kept": 3}), "\n")
	want := strings.Join([]string{
		"  kept = 3",
		"  read = 4",
		"  shuffle_bytes.clusters = 60",
		"  shuffle_bytes.ids = 100",
		"  shuffle_bytes, all stages = 160 (40 bytes per document read)",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
