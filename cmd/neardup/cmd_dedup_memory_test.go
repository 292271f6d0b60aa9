package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --memory small enough to go out of core writes the same pairs, clusters
// and kept corpus as the default run, and removes its work directory
// unless --keep-work.
func TestDedupMemoryBudget(t *testing.T) {
	base := t.TempDir()
	run := func(name, memory string, keep bool) string {
		dir := filepath.Join(base, name)
		env, _, _ := testEnv()
		o := dedupDefaults([]string{sampleCorpus}, dir)
		o.Memory, o.KeepWork = memory, keep
		if err := runDedup(context.Background(), env, o); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	mem := run("mem", "", false)
	ext := run("ext", "64KiB", false)
	var sum struct {
		External bool  `json:"external"`
		Spilled  int64 `json:"spilled_bytes"`
	}
	b, err := os.ReadFile(filepath.Join(ext, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.External || sum.Spilled == 0 {
		t.Fatalf("--memory 64KiB: %+v, want an out-of-core run", sum)
	}
	for _, f := range []string{"pairs.jsonl", "clusters.jsonl"} {
		a, _ := os.ReadFile(filepath.Join(mem, f))
		e, _ := os.ReadFile(filepath.Join(ext, f))
		if len(a) == 0 || !bytes.Equal(a, e) {
			t.Fatalf("%s differs out of core (%d and %d bytes)", f, len(a), len(e))
		}
	}
	ka, _ := os.ReadDir(filepath.Join(mem, "kept"))
	ke, _ := os.ReadDir(filepath.Join(ext, "kept"))
	if len(ka) == 0 || len(ka) != len(ke) {
		t.Fatalf("kept/: %d and %d files", len(ka), len(ke))
	}
	for i := range ka {
		a, _ := os.ReadFile(filepath.Join(mem, "kept", ka[i].Name()))
		e, _ := os.ReadFile(filepath.Join(ext, "kept", ke[i].Name()))
		if ka[i].Name() != ke[i].Name() || !bytes.Equal(a, e) {
			t.Fatalf("kept/%s differs out of core", ka[i].Name())
		}
	}
	if _, err := os.Stat(filepath.Join(ext, "work")); !os.IsNotExist(err) {
		t.Fatalf("work directory left: %v", err)
	}
	kept := run("keep", "64KiB", true)
	if _, err := os.Stat(filepath.Join(kept, "work", "sketches.bin")); err != nil {
		t.Fatalf("--keep-work: %v", err)
	}
}

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{"2GiB": 2 << 30, "512MiB": 512 << 20, "64mib": 64 << 20, "1.5g": 3 << 29, "1000000": 1e6, "10kb": 10 << 10} {
		got, err := parseBytes(s)
		if err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1GiB", "lots", "1e30"} {
		if _, err := parseBytes(s); err == nil {
			t.Errorf("parseBytes(%q): no error", s)
		}
	}
}

// TestMemoryFlag: index add and serve take --memory as dedup does (a bad
// size is a usage error); the store is sized from the budget.
func TestMemoryFlag(t *testing.T) {
	dir := t.TempDir()
	env, stdout, errb := testEnv()
	if code := Main(context.Background(), []string{"index", "add", "-q", "--memory", "64MiB", "--store", filepath.Join(dir, "idx"), sampleCorpus}, env); code != ExitOK {
		t.Fatalf("index add --memory 64MiB: exit %d: %s", code, errb)
	}
	if !strings.Contains(stdout.String(), "added 474 documents") {
		t.Errorf("index add --memory 64MiB: %s", stdout)
	}
	for _, args := range [][]string{
		{"index", "add", "-q", "--memory", "lots", "--store", filepath.Join(dir, "idx2"), sampleCorpus},
		{"serve", "--memory", "-1", "--store", filepath.Join(dir, "idx")},
		{"dedup", "-q", "--memory", "12XB", "--out", filepath.Join(dir, "out"), sampleCorpus},
	} {
		env, _, errb := testEnv()
		if code := Main(context.Background(), args, env); code != ExitUsage || !strings.Contains(errb.String(), "--memory") {
			t.Errorf("%v: exit %d: %s", args, code, errb)
		}
	}
	o := pebbleBudget(nil, 64<<20)
	if o.CacheBytes != 8<<20 || o.BulkBytes != 4<<20 || o.MemTableBytes != 4<<20 {
		t.Errorf("pebbleBudget(64MiB) = %+v", o)
	}
	if o := pebbleBudget(nil, 64<<30); o.CacheBytes != 256<<20 || o.BulkBytes != 64<<20 || o.MemTableBytes != 64<<20 {
		t.Errorf("pebbleBudget(64GiB) = %+v", o)
	}
	if pebbleBudget(nil, 0) != nil {
		t.Error("pebbleBudget without a budget changed the options")
	}
}

// The store's share of a budget is its cache and memtables off the Go
// heap and its bulk buffer on it, never more than half the budget (its
// minimum sizes pass a tiny one).
func TestPebbleShare(t *testing.T) {
	for _, c := range []struct{ budget, offHeap, heap int64 }{
		{4 << 30, 256<<20 + 2*64<<20, 64 << 20},
		{410 << 20, 410<<20/8 + 2*(410<<20/32), 410 << 20 / 16},
		{64 << 20, 8<<20 + 2*4<<20, 4 << 20},
		{64 << 10, 32 << 10, 0},
		{0, 0, 0},
	} {
		off, heap := pebbleShare(c.budget)
		if off != c.offHeap || heap != c.heap {
			t.Errorf("pebbleShare(%d) = %d, %d; want %d, %d", c.budget, off, heap, c.offHeap, c.heap)
		}
		if off+heap > c.budget/2 {
			t.Errorf("pebbleShare(%d) = %d, %d: more than half the budget", c.budget, off, heap)
		}
	}
}

// --store memory holds the index in the process: under a budget too small
// for it the run is refused with exit 2 and the numbers, in one line, not
// let grow past the budget: at the start when the input is a file (the
// estimate from its size), once the store passes its share on standard
// input (whose size is unknown); with room it writes the default run's
// pairs.
func TestDedupMemoryStoreBudget(t *testing.T) {
	base := t.TempDir()
	env, stdout, stderr := testEnv()
	small := filepath.Join(base, "small")
	code := Main(context.Background(), []string{"dedup", sampleCorpus, "--out", small, "--store", "memory", "--memory", "2MiB", "-q"}, env)
	msg := stderr.String()
	// 474 documents of 2.6 KB each in the store (1.2 MiB): more than its
	// 1 MiB, refused before anything is written.
	if code != ExitUsage || !strings.HasPrefix(msg, "neardup: --store memory would hold about 1.2MiB (about 474 documents in 1.0MiB of input, ") ||
		!strings.HasSuffix(msg, "more than its share 1MiB (half) of --memory 2MiB: use the default store (Pebble, on disk), or --memory 4MiB or more\n") ||
		strings.Count(msg, "\n") != 1 {
		t.Fatalf("--store memory --memory 2MiB: exit %d, %q", code, msg)
	}
	if _, err := os.Stat(small); !os.IsNotExist(err) || stdout.Len() != 0 {
		t.Fatalf("a refused run wrote its --out (%v) or %q", err, stdout)
	}
	// The suggested budget is enough (the estimate holds), and so is
	// the file read from standard input once the run reaches its adds.
	env, _, stderr = testEnv()
	if code := Main(context.Background(), []string{"dedup", sampleCorpus, "--out", filepath.Join(base, "enough"), "--store", "memory", "--memory", "4MiB", "-q"}, env); code != ExitOK {
		t.Fatalf("--store memory --memory 4MiB: exit %d: %s", code, stderr)
	}
	body, err := os.ReadFile(sampleCorpus)
	if err != nil {
		t.Fatal(err)
	}
	env, _, stderr = testEnv()
	env.Stdin = bytes.NewReader(body)
	code = Main(context.Background(), []string{"dedup", "-", "--out", filepath.Join(base, "stdin"), "--store", "memory", "--memory", "2MiB", "-q"}, env)
	msg = stderr.String()
	if want := "neardup: --store memory needs more than 1MiB, its share (half) of --memory 2MiB: use the default store (Pebble, on disk), or a larger --memory\n"; code != ExitUsage || msg != want {
		t.Fatalf("standard input, --store memory --memory 2MiB: exit %d, %q; want exit 2, %q", code, msg, want)
	}
	ref, got := filepath.Join(base, "ref"), filepath.Join(base, "mem")
	for _, c := range []struct{ dir, store string }{{ref, ""}, {got, "memory"}} {
		env, _, stderr := testEnv()
		args := []string{"dedup", sampleCorpus, "--out", c.dir, "--memory", "256MiB", "-q"}
		if c.store != "" {
			args = append(args, "--store", c.store)
		}
		if code := Main(context.Background(), args, env); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	a, _ := os.ReadFile(filepath.Join(ref, "pairs.jsonl"))
	b, _ := os.ReadFile(filepath.Join(got, "pairs.jsonl"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("--store memory --memory 256MiB: pairs differ (%d and %d bytes)", len(a), len(b))
	}
}

// An input larger than the sample (storeSampleDocs) is estimated from its
// size: 6,000 documents of about equal length are estimated at 6,000
// within 10% (the bytes read when the sample ends are counted in whole
// reads of the input's buffer, 64 KiB, against about 700 KiB sampled).
func TestCheckMemoryStoreEstimate(t *testing.T) {
	var b strings.Builder
	const n = 3 * storeSampleDocs
	for i := range n {
		fmt.Fprintf(&b, `{"id":"d%05d","text":"`, i)
		for w := range 40 {
			fmt.Fprintf(&b, "w%05d ", (i*7919+w*104729)%99991)
		}
		b.WriteString("\"}\n")
	}
	in := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	o := dedupDefaults([]string{in}, filepath.Join(t.TempDir(), "out"))
	env, _, _ := testEnv()
	do, err := dedupLibOptions(context.Background(), env, &o)
	if err != nil {
		t.Fatal(err)
	}
	copts, err := o.Corpus.options()
	if err != nil {
		t.Fatal(err)
	}
	do.Memory = 1 << 20
	err = checkMemoryStore(context.Background(), []string{in}, copts, do)
	var ue *UsageError
	if !errors.As(err, &ue) || !ue.Bare {
		t.Fatalf("checkMemoryStore: %v, want a usage error", err)
	}
	var docs int
	t.Log(err)
	if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "(about ")+len("(about "):], "%d", &docs); serr != nil || docs < n*90/100 || docs > n*110/100 {
		t.Fatalf("estimated %d documents (%v), want about %d: %v", docs, serr, n, err)
	}
	do.Memory = 1 << 30
	if err := checkMemoryStore(context.Background(), []string{in}, copts, do); err != nil {
		t.Fatalf("--memory 1GiB: %v", err)
	}
}
