package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/neardup/neardup/corpus"
)

// dedupStdinSummary is what the stdin tests compare of summary.json.
type dedupStdinSummary struct {
	Read, Kept, Duplicates, Rejected, Pairs, Clusters, Candidates int64
	External                                                      bool
}

func readDedupSummary(t *testing.T, dir string) dedupStdinSummary {
	t.Helper()
	var s dedupStdinSummary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// keptRecords reads back every record of dir/kept (its JSONL lines, in order).
func keptRecords(t *testing.T, dir string) []string {
	t.Helper()
	r, err := corpus.Open([]string{filepath.Join(dir, "kept")}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for r.Next() {
		out = append(out, string(r.Doc().Raw))
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDedupStdin: the shipped corpus piped through standard input gives the
// file run's pairs, clusters and counts, in memory and out of core, and a
// kept file kept/stdin.jsonl.zst that decompresses to the file run's kept
// records; the spool goes with the work directory unless --keep-work.
func TestDedupStdin(t *testing.T) {
	input, err := os.ReadFile(sampleCorpus)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	run := func(name string, inputs []string, memory string, keepWork bool) string {
		dir := filepath.Join(base, name)
		env, _, _ := testEnv()
		env.Stdin = bytes.NewReader(input)
		o := dedupDefaults(inputs, dir)
		o.Memory, o.KeepWork = memory, keepWork
		if err := runDedup(context.Background(), env, o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return dir
	}
	file := run("file", []string{sampleCorpus}, "", false)
	want := readDedupSummary(t, file)
	wantKept := keptRecords(t, file)
	if want.Read != 474 || want.Duplicates == 0 || int64(len(wantKept)) != want.Kept {
		t.Fatalf("file run: %+v, %d kept records", want, len(wantKept))
	}
	for _, c := range []struct {
		name, memory string
		external     bool
	}{{"stdin", "", false}, {"stdin-ext", "64KiB", true}} {
		dir := run(c.name, []string{"-"}, c.memory, false)
		got := readDedupSummary(t, dir)
		if got.External != c.external {
			t.Fatalf("%s: external %v, want %v", c.name, got.External, c.external)
		}
		got.External = want.External
		if got != want {
			t.Fatalf("%s: summary %+v, want the file run's %+v", c.name, got, want)
		}
		for _, f := range []string{"pairs.jsonl", "clusters.jsonl", "removed.jsonl"} {
			a, _ := os.ReadFile(filepath.Join(file, f))
			b, _ := os.ReadFile(filepath.Join(dir, f))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Fatalf("%s: %s differs from the file run's (%d and %d bytes)", c.name, f, len(a), len(b))
			}
		}
		ents, err := os.ReadDir(filepath.Join(dir, "kept"))
		if err != nil || len(ents) != 1 || ents[0].Name() != "stdin.jsonl.zst" {
			t.Fatalf("%s: kept/ holds %v (%v), want stdin.jsonl.zst alone", c.name, ents, err)
		}
		z, err := os.ReadFile(filepath.Join(dir, "kept", "stdin.jsonl.zst"))
		if err != nil || !bytes.HasPrefix(z, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			t.Fatalf("%s: kept file is not zstd (%v)", c.name, err)
		}
		if got := keptRecords(t, dir); strings.Join(got, "\n") != strings.Join(wantKept, "\n") {
			t.Fatalf("%s: %d kept records differ from the file run's %d", c.name, len(got), len(wantKept))
		}
		if _, err := os.Stat(filepath.Join(dir, "work")); !os.IsNotExist(err) {
			t.Fatalf("%s: work directory left: %v", c.name, err)
		}
	}

	// --keep-work keeps the spool, which holds standard input's bytes.
	dir := run("keep", []string{"-"}, "", true)
	f, err := os.Open(filepath.Join(dir, "work", stdinSpoolName))
	if err != nil {
		t.Fatalf("--keep-work: %v", err)
	}
	defer f.Close()
	if b, err := io.ReadAll(s2.NewReader(f)); err != nil || !bytes.Equal(b, input) {
		t.Fatalf("spool: %d bytes (%v), want the %d of the input", len(b), err, len(input))
	}
}

// TestDedupStdinMixed: standard input among files; the files' kept documents
// keep their names and compression, standard input's go to stdin.jsonl.zst.
func TestDedupStdinMixed(t *testing.T) {
	base := t.TempDir()
	in := filepath.Join(base, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	a := `{"id":"a1","text":"the quick brown fox jumps over the lazy dog again and again"}` + "\n"
	b := `{"id":"b1","text":"the quick brown fox jumps over the lazy dog again and again"}` + "\n" +
		`{"id":"b2","text":"an entirely different sentence about something else altogether"}` + "\n"
	if err := os.WriteFile(filepath.Join(in, "a.jsonl"), []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "out")
	env, _, _ := testEnv()
	env.Stdin = strings.NewReader(b)
	if err := runDedup(context.Background(), env, dedupDefaults([]string{filepath.Join(in, "a.jsonl"), "-"}, out)); err != nil {
		t.Fatal(err)
	}
	s := readDedupSummary(t, out)
	if s.Read != 3 || s.Kept != 2 || s.Duplicates != 1 {
		t.Fatalf("summary %+v, want 3 read, 2 kept, 1 duplicate", s)
	}
	got, err := os.ReadFile(filepath.Join(out, "kept", "a.jsonl"))
	if err != nil || string(got) != a {
		t.Fatalf("kept/a.jsonl = %q (%v)", got, err)
	}
	recs := keptRecords(t, out)
	if len(recs) != 2 || !strings.Contains(recs[1], `"b2"`) {
		t.Fatalf("kept records %q", recs)
	}
}

// TestDedupStdinSpoolFails: a spool that cannot be written (a full disk:
// the spool file is /dev/full; a --work under a regular file) ends the run
// with one line naming the spool and a non-zero exit, and writes no output.
func TestDedupStdinSpoolFails(t *testing.T) {
	input, err := os.ReadFile(sampleCorpus)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	full := filepath.Join(base, "full")
	if err := os.MkdirAll(filepath.Join(full, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	fullOK := true
	if err := os.Symlink("/dev/full", filepath.Join(full, "work", stdinSpoolName)); err != nil {
		fullOK = false
	} else if _, err := os.Stat("/dev/full"); err != nil {
		fullOK = false
	}
	notDir := filepath.Join(base, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"full", []string{"dedup", "-", "-q", "--out", full}, "no space left on device"},
		{"not-a-dir", []string{"dedup", "-", "-q", "--out", filepath.Join(base, "out2"), "--work", filepath.Join(notDir, "work")}, "not a directory"},
	}
	for _, c := range cases {
		if c.name == "full" && !fullOK {
			t.Log("no /dev/full: the full-disk case is skipped")
			continue
		}
		env, stdout, stderr := testEnv()
		env.Stdin = bytes.NewReader(input)
		code := Main(context.Background(), c.args, env)
		msg := stderr.String()
		if code == ExitOK || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "spool of standard input") || !strings.Contains(msg, c.want) {
			t.Fatalf("%s: exit %d, stderr %q, stdout %q", c.name, code, msg, stdout)
		}
		out := c.args[4]
		for _, f := range []string{"summary.json", "pairs.jsonl", "kept"} {
			if _, err := os.Stat(filepath.Join(out, f)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s: %s written after the spool failed (%v)", c.name, f, err)
			}
		}
	}
}

// spoolFailWriter fails every write after the first n bytes.
type spoolFailWriter struct{ n int }

var errInjected = errors.New("injected write error")

func (w *spoolFailWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errInjected
	}
	w.n -= len(p)
	return len(p), nil
}

func (w *spoolFailWriter) Close() error { return nil }

// TestStdinSpoolWriteError: a write error of the spool file, met in Read or
// only when Finish flushes, is returned by Finish, and Open then refuses.
func TestStdinSpoolWriteError(t *testing.T) {
	// Incompressible input, so that the compressed spool passes each limit.
	src := make([]byte, 4<<20)
	rand.NewChaCha8([32]byte{1}).Read(src)
	for _, limit := range []int{0, 1000, 100000} {
		s, err := newSpoolTo("spool", &spoolFailWriter{n: limit}, bytes.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		n, rerr := io.Copy(io.Discard, s)
		ferr := s.Finish()
		if !errors.Is(ferr, errInjected) || !strings.Contains(ferr.Error(), "spool of standard input") {
			t.Fatalf("limit %d: Finish = %v (read %d bytes, %v)", limit, ferr, n, rerr)
		}
		if rerr != nil && !errors.Is(rerr, errInjected) {
			t.Fatalf("limit %d: Read = %v", limit, rerr)
		}
		if _, err := s.Open(); err == nil {
			t.Fatalf("limit %d: Open of a short spool succeeded", limit)
		}
	}
}

// TestStdinSpoolRawThenCompressed: a spool that passes spoolRawLimit, in
// reads that straddle it or end on it, reads back byte for byte, its first
// part in uncompressed blocks and the rest compressed.
func TestStdinSpoolRawThenCompressed(t *testing.T) {
	old := spoolRawLimit
	t.Cleanup(func() { spoolRawLimit = old })
	// Compressible text, so that the compressed part is smaller.
	var src bytes.Buffer
	r := rand.New(rand.NewPCG(1, 2))
	for src.Len() < 3<<20 {
		src.WriteString([]string{"alpha ", "beta ", "gamma ", "delta "}[r.IntN(4)])
	}
	for _, limit := range []int64{0, 1, 65536, 1 << 20, 1<<20 + 7, 1 << 40} {
		spoolRawLimit = limit
		path := filepath.Join(t.TempDir(), "spool")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		// 64 KiB reads: 1 MiB is a read boundary, 1 MiB + 7 is not.
		s, err := newSpoolTo(path, f, bytes.NewReader(src.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64<<10)
		if _, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{s}, buf); err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(); err != nil {
			t.Fatal(err)
		}
		rc, err := s.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, src.Bytes()) {
			t.Fatalf("limit %d: read back %d bytes (%v), want %d", limit, len(got), err, src.Len())
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		raw := min(limit, int64(src.Len()))
		// Uncompressed blocks cost 8 bytes each beyond their data; the
		// rest compresses to well under half.
		if st.Size() < raw || st.Size() > raw+(int64(src.Len())-raw)/2+4096 {
			t.Fatalf("limit %d: spool of %d bytes for %d raw of %d", limit, st.Size(), raw, src.Len())
		}
	}
}
