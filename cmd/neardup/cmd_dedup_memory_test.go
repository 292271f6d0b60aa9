package main

import (
	"bytes"
	"context"
	"encoding/json"
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
// for it the run is refused with exit 2 and the numbers, not let grow
// past the budget; with room it writes the default run's pairs.
func TestDedupMemoryStoreBudget(t *testing.T) {
	base := t.TempDir()
	env, _, stderr := testEnv()
	code := Main(context.Background(), []string{"dedup", sampleCorpus, "--out", filepath.Join(base, "small"), "--store", "memory", "--memory", "2MiB", "-q"}, env)
	msg := stderr.String()
	if code != ExitUsage || !strings.Contains(msg, "--store memory needs more than 1MiB, its share (half) of --memory 2MiB") {
		t.Fatalf("--store memory --memory 2MiB: exit %d, %q", code, msg)
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
