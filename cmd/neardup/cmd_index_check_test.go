package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/corpus/corpustest"
	"github.com/neardup/neardup/internal/rng"
)

// firstDocs writes the first n records of the sample corpus to a JSONL
// file in dir and returns its path.
func firstDocs(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	lines := corpustest.ReadJSONL[json.RawMessage](t, sampleCorpus)
	for _, line := range lines[:min(n, len(lines))] {
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "small.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runMain runs neardup in this process and returns its exit code and
// output; a panic is returned as exit code -1 with the panic in stderr.
func runMain(args ...string) (code int, stdout, stderr string) {
	env, out, errb := testEnv()
	func() {
		defer func() {
			if r := recover(); r != nil {
				code = -1
				fmt.Fprintf(errb, "PANIC: %v", r)
			}
		}()
		code = Main(context.Background(), args, env)
	}()
	return code, out.String(), strings.TrimSuffix(errb.String(), "Run 'neardup --help' for usage.\n")
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func flipFileBit(t *testing.T, path string, bit int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[bit/8] ^= 1 << (bit % 8)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIndexCheckSound(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	if code, _, errs := runMain("index", "add", "-q", "--store", idx, firstDocs(t, dir, 80)); code != 0 {
		t.Fatalf("index add: exit %d: %s", code, errs)
	}
	code, out, errs := runMain("index", "check", "--store", idx, "--json")
	if code != 0 {
		t.Fatalf("check of a sound index: exit %d: %s%s", code, out, errs)
	}
	var rep indexCheckJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Docs != 80 || rep.Postings == 0 {
		t.Errorf("check: %+v, want ok with 80 documents", rep)
	}
	if code, _, _ := runMain("index", "check", "--store", filepath.Join(dir, "nothing")); code != ExitUsage {
		t.Errorf("check of a missing store: exit %d, want %d", code, ExitUsage)
	}
}

// TestIndexCheckFlippedBits flips one bit at a time in every file of a
// small index (the first and last bits, the middle, and random ones) and
// runs index check, then index check --repair, on each copy: no panic
// anywhere, every failure is one line, and damage that check reports
// names the damaged file (store damage) or the problem (index damage).
// A table's first data block is read by every check, so a bit flipped in
// it must be found.
func TestIndexCheckFlippedBits(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "idx")
	if code, _, errs := runMain("index", "add", "-q", "--store", src, firstDocs(t, dir, 80)); code != 0 {
		t.Fatalf("index add: exit %d: %s", code, errs)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	st := rng.New(rng.Key(12, 1))
	outcomes := map[string]int{}
	for _, e := range entries {
		info, _ := e.Info()
		size := info.Size()
		if e.IsDir() || size == 0 || e.Name() == "LOCK" || e.Name() == "neardup.pid" {
			continue
		}
		bits := []int64{0, size*8 - 1, size * 4}
		for range 4 {
			bits = append(bits, int64(st.Intn(uint64(size*8))))
		}
		for i, bit := range bits {
			idx := copyDir(t, src)
			flipFileBit(t, filepath.Join(idx, e.Name()), bit)
			code, out, errs := runMain("index", "check", "--store", idx)
			kind := kindOfStoreFile(e.Name())
			switch {
			case code == -1:
				t.Errorf("bit %d of %s: %s", bit, e.Name(), errs)
				continue
			case code == 0:
				outcomes[kind+": intact"]++
			case strings.Count(strings.TrimSpace(errs), "\n") > 0:
				t.Errorf("bit %d of %s: exit %d with a message of several lines: %q", bit, e.Name(), code, errs)
			case strings.Contains(errs, e.Name()):
				outcomes[kind+": file named"]++
			case strings.Contains(out, "problem: "):
				outcomes[kind+": index problem"]++
			default:
				outcomes[kind+": other error"]++
				t.Logf("bit %d of %s: exit %d: %s", bit, e.Name(), code, errs)
			}
			if kind == "table" && i == 0 && code == 0 {
				t.Errorf("bit 0 of %s (its first data block) flipped: check says the index is sound", e.Name())
			}
			if kind == "table" && code != 0 && code != -1 && !strings.Contains(errs, e.Name()) {
				t.Errorf("bit %d of %s: the error does not name the table: %s", bit, e.Name(), errs)
			}
			rcode, rout, rerrs := runMain("index", "check", "--store", idx, "--repair")
			switch {
			case rcode == -1:
				t.Errorf("repair, bit %d of %s: %s", bit, e.Name(), rerrs)
			case rcode == 0:
				outcomes[kind+": repaired or intact"]++
				if code != 0 && !strings.Contains(rout, "documents lost") && !strings.Contains(rout, "nothing to repair") {
					t.Errorf("repair, bit %d of %s: %q does not say what was lost", bit, e.Name(), rout)
				}
			case strings.Count(strings.TrimSpace(rerrs), "\n") > 0:
				t.Errorf("repair, bit %d of %s: several lines: %q", bit, e.Name(), rerrs)
			default:
				outcomes[kind+": repair refused"]++
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

func kindOfStoreFile(name string) string {
	switch {
	case strings.HasSuffix(name, ".sst"):
		return "table"
	case strings.HasPrefix(name, "MANIFEST"):
		return "manifest"
	case strings.HasSuffix(name, ".log"):
		return "wal"
	case strings.HasPrefix(name, "OPTIONS"):
		return "options"
	}
	return name
}
