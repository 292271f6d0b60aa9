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

	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/internal/rng"
)

func filesTestEnv() (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, &out, &errb
}

func rngBytes(seed uint64, n int) []byte {
	s := rng.New(rng.Key(seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(s.Uint64())
	}
	return b
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// makeTree builds a directory with an exact duplicate, two near-duplicate
// versions, an unrelated file, an empty file, a broken symlink and a link
// loop.
func makeTree(t *testing.T) (dir string, base []byte) {
	dir = t.TempDir()
	base = rngBytes(1, 200000)
	v2 := append(append(append([]byte{}, base[:100000]...), []byte("an edit in the middle")...), base[100000:]...)
	writeTestFile(t, filepath.Join(dir, "a/v1.bin"), base)
	writeTestFile(t, filepath.Join(dir, "b/v1-copy.bin"), base)
	writeTestFile(t, filepath.Join(dir, "a/v2.bin"), v2)
	writeTestFile(t, filepath.Join(dir, "other.bin"), rngBytes(2, 150000))
	writeTestFile(t, filepath.Join(dir, "empty"), nil)
	os.Symlink("nowhere", filepath.Join(dir, "broken"))
	os.Symlink("loop2", filepath.Join(dir, "loop1"))
	os.Symlink("loop1", filepath.Join(dir, "loop2"))
	os.Symlink("a", filepath.Join(dir, "dirlink"))
	return dir, base
}

func TestFilesScan(t *testing.T) {
	dir, _ := makeTree(t)
	env, out, errb := filesTestEnv()
	plot := filepath.Join(t.TempDir(), "sizes.png")
	err := runFilesScan(context.Background(), env, filesScanOptions{Dirs: []string{dir}, Chunk: chunkFlags{Avg: chunk.DefaultAvg}, Plot: plot, Sketch: "rdc", Threshold: 0.5, Bins: 8})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log(got)
	for _, want := range []string{
		"files: 5 (", "skipped: 3",
		"exact duplicates: 1 groups, 1 redundant files (200000 bytes)",
		"a/v1.bin", "b/v1-copy.bin",
		"similar files", "group 1:", "a/v1.bin ~ " + filepath.Join(dir, "a/v2.bin"),
		"histogram plotted to",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(got, "other.bin ~") || strings.Contains(got, "~ "+filepath.Join(dir, "other.bin")) {
		t.Error("unrelated file reported similar")
	}
	for _, want := range []string{"broken: broken symbolic link", "loop1: symbolic link loop"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, errb.String())
		}
	}
	// Dedup ratio: v1 is stored twice and v2 shares all but a few chunks.
	if !strings.Contains(got, "dedup ratio") {
		t.Fatal("no dedup ratio")
	}
	png, err := os.ReadFile(plot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("plot not written as PNG: %v", err)
	}
	// The plot never replaces an input.
	err = runFilesScan(context.Background(), env, filesScanOptions{Dirs: []string{dir}, Chunk: chunkFlags{Avg: chunk.DefaultAvg}, Plot: filepath.Join(dir, "other.bin"), Sketch: "rdc", Threshold: 0.5, Bins: 8})
	var ue *UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("plot over input: %v", err)
	}
}

func TestFilesSimilar(t *testing.T) {
	dir, base := makeTree(t)
	q := filepath.Join(t.TempDir(), "query.bin")
	writeTestFile(t, q, append(append([]byte{}, base[:150000]...), rngBytes(3, 20000)...))
	env, out, _ := filesTestEnv()
	err := runFilesSimilar(context.Background(), env, filesSimilarOptions{File: q, In: []string{dir}, Top: 3, Sketch: "large", Chunk: chunkFlags{Avg: chunk.DefaultAvg}})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	t.Log(out.String())
	if len(lines) < 4 {
		t.Fatalf("too few lines: %q", out.String())
	}
	for _, l := range lines[2:4] {
		if !strings.Contains(l, "v1") && !strings.Contains(l, "v2") {
			t.Errorf("top results should be versions of the file: %q", l)
		}
	}
	if err := runFilesSimilar(context.Background(), env, filesSimilarOptions{File: q}); err == nil {
		t.Error("missing --in accepted")
	}
}

func TestFilesPlanApply(t *testing.T) {
	dir, base := makeTree(t)
	work := t.TempDir()
	nw := append(append([]byte{}, base[:50000]...), rngBytes(4, 3000)...)
	nw = append(append(nw, base[60000:]...), rngBytes(2, 150000)[:70000]...) // part of other.bin
	newPath := filepath.Join(work, "new.bin")
	writeTestFile(t, newPath, nw)
	for _, old := range []string{dir, filepath.Join(dir, "a/v1.bin")} {
		env, out, _ := filesTestEnv()
		deltaPath := filepath.Join(work, "new.delta")
		if err := runFilesPlan(context.Background(), env, filesPlanOptions{Old: old, New: newPath, Delta: deltaPath, Force: true, Chunk: chunkFlags{Avg: chunk.DefaultAvg}}); err != nil {
			t.Fatal(err)
		}
		t.Log(out.String())
		if !strings.Contains(out.String(), "bytes to send:") {
			t.Fatal("no plan summary")
		}
		rebuilt := filepath.Join(work, "rebuilt.bin")
		env, out, _ = filesTestEnv()
		if err := runFilesApply(context.Background(), env, filesApplyOptions{Old: old, Delta: deltaPath, Out: rebuilt, Force: true, Chunk: chunkFlags{Avg: chunk.DefaultAvg}}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(rebuilt)
		if !bytes.Equal(got, nw) {
			t.Fatalf("rebuilt file differs (OLD %s)", old)
		}
		// Never over an input: the delta, OLD, or a source inside OLD.
		for _, bad := range []string{deltaPath, filepath.Join(dir, "a/v1.bin")} {
			before, _ := os.ReadFile(bad)
			err := runFilesApply(context.Background(), env, filesApplyOptions{Old: old, Delta: deltaPath, Out: bad, Chunk: chunkFlags{Avg: chunk.DefaultAvg}})
			after, _ := os.ReadFile(bad)
			if err == nil || !bytes.Equal(before, after) {
				t.Fatalf("apply over input %s: err %v", bad, err)
			}
		}
		if err := runFilesPlan(context.Background(), env, filesPlanOptions{Old: old, New: newPath, Delta: newPath, Chunk: chunkFlags{Avg: chunk.DefaultAvg}}); err == nil {
			t.Fatal("plan wrote its delta over NEW")
		}
	}
	// Applying against the wrong OLD fails verification and leaves no file.
	env, _, _ := filesTestEnv()
	deltaPath := filepath.Join(work, "new.delta")
	runFilesPlan(context.Background(), env, filesPlanOptions{Old: filepath.Join(dir, "a/v1.bin"), New: newPath, Delta: deltaPath, Force: true, Chunk: chunkFlags{Avg: chunk.DefaultAvg}})
	out := filepath.Join(work, "wrong.bin")
	if err := runFilesApply(context.Background(), env, filesApplyOptions{Old: filepath.Join(dir, "other.bin"), Delta: deltaPath, Out: out, Chunk: chunkFlags{Avg: chunk.DefaultAvg}}); err == nil {
		t.Fatal("wrong OLD accepted")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("failed apply left an output file")
	}
}

func TestFilesCommandLine(t *testing.T) {
	dir, _ := makeTree(t)
	env, out, errb := filesTestEnv()
	if code := Main(context.Background(), []string{"files", "scan", "--sketch", "large", dir}, env); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "dedup ratio") {
		t.Fatal(out.String())
	}
	if code := Main(context.Background(), []string{"files", "scan", "--avg", "10", dir}, env); code != ExitUsage {
		t.Fatalf("bad --avg: exit %d", code)
	}
	if code := Main(context.Background(), []string{"files", "scan", filepath.Join(dir, "missing")}, env); code != ExitFailure {
		t.Fatalf("missing dir: exit %d", code)
	}
}

// TestFilesSimilarNotSelf: a query file under --in is not its own match,
// every match has a score (the exact chunk-Jaccard), and --json agrees with
// the text.
func TestFilesSimilarNotSelf(t *testing.T) {
	dir, _ := makeTree(t)
	q := filepath.Join(dir, "a/v1.bin")
	env, out, _ := filesTestEnv()
	opts := filesSimilarOptions{File: q, In: []string{dir}, Top: 10, Sketch: "rdc", Chunk: chunkFlags{Avg: chunk.DefaultAvg}, JSON: true}
	if err := runFilesSimilar(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	var res filesSimilarResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err, out.String())
	}
	t.Log(out.String())
	if len(res.Matches) < 2 {
		t.Fatalf("want the copy and v2: %+v", res.Matches)
	}
	for _, m := range res.Matches {
		if m.File == q {
			t.Error("query file listed as its own match")
		}
		if m.Score <= 0 || m.Score > 1 {
			t.Errorf("match without a score: %+v", m)
		}
		if strings.HasSuffix(m.File, "other.bin") {
			t.Errorf("unrelated file listed: %+v", m)
		}
	}
	if m := res.Matches[0]; !strings.HasSuffix(m.File, "v1-copy.bin") || m.Score != 1 || !m.Identical {
		t.Errorf("first match %+v, want the identical copy with score 1", m)
	}
	out.Reset()
	opts.JSON = false
	if err := runFilesSimilar(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "score") || strings.Contains(out.String(), "  "+q+"\n") {
		t.Errorf("text output:\n%s", out.String())
	}
}

// TestFilesScanChunkStats: the chunk statistics say what they measure:
// chunks ended by a cut point lie in the window [min, max]; only last
// chunks of files are shorter; the text and the JSON agree.
func TestFilesScanChunkStats(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 20; i++ { // many small files pull the mean below min
		writeTestFile(t, filepath.Join(dir, fmt.Sprintf("small%02d", i)), rngBytes(uint64(10+i), 500+100*i))
	}
	writeTestFile(t, filepath.Join(dir, "big"), rngBytes(99, 300000))
	env, out, _ := filesTestEnv()
	opts := filesScanOptions{Dirs: []string{dir}, Chunk: chunkFlags{Avg: chunk.DefaultAvg}, Sketch: "rdc", Threshold: 0.5, Bins: 8, JSON: true}
	if err := runFilesScan(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	var res filesScanResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	o := chunk.Options{Avg: chunk.DefaultAvg}.EnsureDefaults()
	cs := res.ChunkSizes
	if cs.Window != [2]int{o.Min, o.Max} || o.Min != 3*chunk.DefaultAvg/4 {
		t.Errorf("window %v, chunk options %+v", cs.Window, o)
	}
	if cs.Cut.Count == 0 || cs.Cut.Min < o.Min || cs.Cut.Max > o.Max {
		t.Errorf("cut chunks outside the window: %+v", cs.Cut)
	}
	if cs.Last.Count != 21 || cs.Mean >= float64(o.Min) || cs.Min != cs.Last.Min {
		t.Errorf("stats %+v", cs)
	}
	out.Reset()
	opts.JSON = false
	if err := runFilesScan(context.Background(), env, opts); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		fmt.Sprintf("chunk sizes: mean %.0f, sd %.0f bytes; shortest %d, longest %d", cs.Mean, cs.SD, cs.Min, cs.Max),
		fmt.Sprintf("%d chunks ended at a cut point (window [%d, %d] bytes)", cs.Cut.Count, o.Min, o.Max),
		fmt.Sprintf("%d last chunks of files (may be shorter than %d)", cs.Last.Count, o.Min),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "(min ") {
		t.Errorf("text mislabels the window as the minimum:\n%s", text)
	}
	// The help states the real default minimum.
	if u := newFilesScanCmd(env).Flags().Lookup("min").Usage; !strings.Contains(u, "3*avg/4") {
		t.Errorf("--min help: %q", u)
	}
}

// TestFilesPlanApplyCommandLine: apply takes NEW as its third argument (the
// old -o FILE still works, with a warning); plan --json has the figures
// the text prints.
func TestFilesPlanApplyCommandLine(t *testing.T) {
	dir, base := makeTree(t)
	work := t.TempDir()
	newPath := filepath.Join(work, "new.bin")
	writeTestFile(t, newPath, append(append([]byte{}, base[:120000]...), rngBytes(5, 4000)...))
	old := filepath.Join(dir, "a/v1.bin")
	deltaPath := filepath.Join(work, "new.delta")
	env, out, errb := filesTestEnv()
	if code := Main(context.Background(), []string{"files", "plan", "--json", "--delta", deltaPath, old, newPath}, env); code != ExitOK {
		t.Fatalf("plan: exit %d: %s", code, errb)
	}
	var plan filesPlanResult
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatal(err, out.String())
	}
	if plan.NewBytes != 124000 || plan.PresentBytes+plan.SendBytes != plan.NewBytes || plan.Present == 0 || plan.DeltaBytes == 0 || plan.Delta != deltaPath {
		t.Errorf("plan %+v", plan)
	}
	want, _ := os.ReadFile(newPath)
	for i, args := range [][]string{
		{"files", "apply", old, deltaPath, filepath.Join(work, "r1.bin")},
		{"files", "apply", old, deltaPath, "-o", filepath.Join(work, "r2.bin")},
	} {
		env, _, errb := filesTestEnv()
		if code := Main(context.Background(), args, env); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb)
		}
		got, _ := os.ReadFile(filepath.Join(work, fmt.Sprintf("r%d.bin", i+1)))
		if !bytes.Equal(got, want) {
			t.Errorf("%v: rebuilt file differs", args)
		}
		if deprecated := strings.Contains(errb.String(), "--out has been deprecated"); deprecated != (i == 1) {
			t.Errorf("%v: stderr %q", args, errb.String())
		}
	}
	env, _, _ = filesTestEnv()
	if code := Main(context.Background(), []string{"files", "apply", old, deltaPath}, env); code != ExitUsage {
		t.Errorf("apply without NEW: exit %d", code)
	}
}
