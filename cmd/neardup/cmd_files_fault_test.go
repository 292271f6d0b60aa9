package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets tests run neardup as a subprocess: the test binary with
// NEARDUP_TEST_MAIN=1 is the command.
func TestMain(m *testing.M) {
	if os.Getenv("NEARDUP_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// neardupCmd returns the command running neardup with args as a
// subprocess.
func neardupCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "NEARDUP_TEST_MAIN=1")
	return cmd
}

// craftDelta writes a delta that claims size bytes and copies the whole
// old file n times, with a wrong root (the verification at the end
// fails): big to write, small to make.
func craftDelta(t *testing.T, path string, oldSize, size, n int64) {
	t.Helper()
	var b bytes.Buffer
	uv := func(x uint64) { b.Write(binary.AppendUvarint(nil, x)) }
	b.WriteString("NDDELTA1")
	uv(uint64(size))
	b.Write(make([]byte, 32)) // root
	uv(1)
	uv(uint64(len("old.bin")))
	b.WriteString("old.bin")
	uv(uint64(oldSize))
	uv(uint64(n))
	for range n {
		b.WriteByte(0)
		uv(0)
		uv(0)
		uv(uint64(oldSize))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// leftovers lists the files of dir other than keep.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.Contains(strings.Join(keep, "\x00")+"\x00", e.Name()+"\x00") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestFilesApplyOutputs(t *testing.T) {
	dir, base := makeTree(t)
	work := t.TempDir()
	nw := append(append([]byte{}, base[:50000]...), rngBytes(4, 3000)...)
	newPath := filepath.Join(work, "new.bin")
	writeTestFile(t, newPath, nw)
	old := filepath.Join(dir, "a/v1.bin")
	deltaPath := filepath.Join(work, "new.delta")
	if code, _, errs := runMain("files", "plan", "--delta", deltaPath, old, newPath); code != 0 {
		t.Fatalf("plan: %d %s", code, errs)
	}
	// An existing file is neither replaced nor touched.
	existing := filepath.Join(work, "existing.txt")
	os.WriteFile(existing, []byte("unrelated"), 0o600)
	for _, args := range [][]string{
		{"files", "apply", old, deltaPath, existing},
		{"files", "apply", old, deltaPath, "-o", existing},
		{"files", "plan", "--delta", existing, old, newPath},
	} {
		code, _, errs := runMain(args...)
		b, _ := os.ReadFile(existing)
		info, _ := os.Stat(existing)
		if code == 0 || string(b) != "unrelated" || info.Mode().Perm() != 0o600 || !strings.Contains(errs, "exists") {
			t.Errorf("%v: exit %d, %q, mode %v: %s", args, code, b, info.Mode(), errs)
		}
	}
	// Written files are 0644 (less the umask), with --force too.
	rebuilt := filepath.Join(work, "rebuilt.bin")
	idfPath := filepath.Join(work, "table.idf")
	for _, args := range [][]string{
		{"files", "apply", old, deltaPath, rebuilt},
		{"files", "apply", "--force", old, deltaPath, existing},
		{"files", "plan", "--force", "--delta", deltaPath, old, newPath},
		{"idf", "build", sampleCorpus, "--idf", idfPath},
	} {
		if code, _, errs := runMain(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	want := os.FileMode(0o644) &^ umask()
	for _, p := range []string{rebuilt, existing, deltaPath, idfPath} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, info.Mode().Perm(), err, want)
		}
	}
	if b, _ := os.ReadFile(existing); !bytes.Equal(b, nw) {
		t.Error("apply --force did not replace the file")
	}
	// A delta that claims more than --max-bytes is refused before
	// anything is written.
	big := filepath.Join(work, "big.delta")
	craftDelta(t, big, int64(len(base)), int64(len(base))*4096, 1)
	out := filepath.Join(work, "big.bin")
	code, _, errs := runMain("files", "apply", "--max-bytes", "1MiB", old, big, out)
	if code != ExitFailure || !strings.Contains(errs, "more than --max-bytes") {
		t.Errorf("a claim over --max-bytes: exit %d: %s", code, errs)
	}
	craftDelta(t, big, int64(len(base)), 1<<50, 1)
	code, _, errs = runMain("files", "apply", old, big, out)
	if code != ExitFailure || !strings.Contains(errs, "free space") {
		t.Errorf("a claim over the free space: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a refused delta left its output")
	}
	if l := leftovers(t, work, "new.bin", "new.delta", "existing.txt", "rebuilt.bin", "table.idf", "big.delta"); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestFilesApplySignals: files apply killed while it writes (SIGTERM, then
// SIGKILL) stops (SIGTERM: within a second, exit non-zero with one line)
// and leaves neither NEW nor a temporary file.
func TestFilesApplySignals(t *testing.T) {
	work := t.TempDir()
	old := filepath.Join(work, "old.bin")
	const oldSize = 1 << 20
	writeTestFile(t, old, rngBytes(7, oldSize))
	d := filepath.Join(work, "big.delta")
	craftDelta(t, d, oldSize, 4<<30, 4<<10) // 4 GiB: still writing when the signal comes
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		out := filepath.Join(work, "new.bin")
		cmd := neardupCmd(t, "files", "apply", "--max-bytes", "8GiB", old, d, out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		sent := time.Now()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		took := time.Since(sent)
		t.Logf("%v: exited after %v: %v: %s", sig, took, err, stderr.String())
		if err == nil {
			t.Errorf("%v: exit 0 (did it finish before the signal?)", sig)
		}
		if sig == syscall.SIGTERM {
			if took > 2*time.Second {
				t.Errorf("SIGTERM honoured after %v", took)
			}
			if msg := strings.TrimSpace(stderr.String()); strings.Contains(msg, "\n") || !strings.Contains(msg, "interrupted") {
				t.Errorf("SIGTERM: message %q", msg)
			}
		}
		if l := leftovers(t, work, "old.bin", "big.delta"); len(l) != 0 {
			t.Errorf("%v: left behind: %v", sig, l)
		}
	}
}
