package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeTextTree writes n files of size bytes of pseudo-random words
// under dir (seeded), in a few subdirectories.
func writeTextTree(t *testing.T, dir string, seed uint64, n, size int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	for i := 0; i < n; i++ {
		var b strings.Builder
		for b.Len() < size {
			fmt.Fprintf(&b, "w%d ", r.IntN(5000))
		}
		p := filepath.Join(dir, fmt.Sprintf("d%d/f%03d.txt", i%4, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(b.String()[:size]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeDigest lists every entry under dir with its type, mode and content.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		fi, _ := os.Lstat(p)
		switch {
		case fi.IsDir():
			fmt.Fprintf(&b, "d %s %o\n", rel, fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			fmt.Fprintf(&b, "l %s %s\n", rel, tg)
		default:
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "f %s %o %d %x\n", rel, fi.Mode().Perm(), len(c), c[:min(len(c), 16)])
		}
		return nil
	})
	return b.String()
}

func TestFilesSyncJSON(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	writeTextTree(t, src, 1, 8, 20<<10)
	writeTextTree(t, dst, 1, 6, 20<<10)
	os.WriteFile(filepath.Join(dst, "extra.txt"), []byte("x"), 0o644)
	os.Symlink("d0/f000.txt", filepath.Join(src, "link"))
	os.MkdirAll(filepath.Join(src, "empty"), 0o700)
	env, out, _ := testEnv()
	err := runFilesDirSync(context.Background(), env, filesDirSyncOptions{Src: src, Dst: dst, Delete: true, JSON: true, Chunk: chunkFlags{Avg: 512}})
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, k := range []string{"bytes_received", "bytes_sent", "files", "chunks", "round_trips", "seconds"} {
		if _, ok := res[k]; !ok {
			t.Errorf("--json lacks %q: %s", k, out)
		}
	}
	if res["files"].(float64) != 8 || res["files_unchanged"].(float64) != 6 || res["deleted"].(float64) != 1 {
		t.Errorf("unexpected figures: %s", out)
	}
	if got, want := treeDigest(t, dst), treeDigest(t, src); got != want {
		t.Fatalf("DST differs from SRC:\n%s\nwant\n%s", got, want)
	}
}

func TestFilesServeRefusesBeyondLoopback(t *testing.T) {
	env, _, _ := testEnv()
	dir := t.TempDir()
	for _, o := range []filesServeOptions{
		{Dir: dir, listenFlags: listenFlags{Addr: "0.0.0.0:0"}},
		{Dir: dir, listenFlags: listenFlags{Addr: "0.0.0.0:0", Token: "t"}},
	} {
		o.Chunk, o.Level = chunkFlags{Avg: 512}, 3
		err := runFilesServe(context.Background(), env, o)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%+v: %v, want a usage error about loopback", o, err)
		}
	}
}

// startFilesServe runs `files serve DIR` as a subprocess and returns it and
// its URL.
func startFilesServe(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := neardupCmd(t, "files", "serve", dir, "--addr", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, url, ok := strings.Cut(sc.Text(), " on "); ok && strings.HasPrefix(url, "http") {
			go io.Copy(io.Discard, stderr)
			return cmd, url
		}
	}
	t.Fatal("files serve did not start")
	return nil, ""
}

// The server is killed (SIGKILL) while a pull runs: the pull ends with
// one line and exit 1, leaves no temporary file, and run again against a
// new server completes the tree.
func TestFilesPullServerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	src, dst := t.TempDir(), t.TempDir()
	writeTextTree(t, src, 2, 200, 64<<10)
	srv, url := startFilesServe(t, src)
	pull := neardupCmd(t, "files", "pull", url, dst)
	var stderr bytes.Buffer
	pull.Stderr = &stderr
	if err := pull.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the server once the pull has made the directories: it has the
	// manifest and is about to fetch chunks.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dst, "d3")); err == nil {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	srv.Process.Signal(syscall.SIGKILL)
	err := pull.Wait()
	if err == nil {
		t.Logf("the pull finished before the server was killed")
	} else {
		if pull.ProcessState.ExitCode() != 1 || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Fatalf("exit %d, stderr %q: want exit 1 and one line", pull.ProcessState.ExitCode(), stderr.String())
		}
	}
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".neardup-pull-") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	_, url = startFilesServe(t, src)
	if out, err := neardupCmd(t, "files", "pull", url, dst, "--json").CombinedOutput(); err != nil {
		t.Fatalf("rerun: %v: %s", err, out)
	}
	if got, want := treeDigest(t, dst), treeDigest(t, src); got != want {
		t.Fatal("rerun did not complete the tree")
	}
}

// A full disk: one line, exit 1, no half-written file in place (a 256 KiB
// tmpfs; needs root).
func TestFilesPullDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).Run(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	src := t.TempDir()
	writeTextTree(t, src, 3, 40, 32<<10)
	_, url := startFilesServe(t, src)
	cmd := neardupCmd(t, "files", "pull", url, mnt)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	msg := strings.TrimSpace(stderr.String())
	if err == nil || cmd.ProcessState.ExitCode() != 1 || strings.Contains(msg, "\n") || !strings.Contains(msg, "no space left on device") {
		t.Fatalf("err %v, stderr %q: want exit 1 and one line about the full disk", err, msg)
	}
	filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".neardup-pull-") {
			t.Errorf("left behind: %s", p)
			return nil
		}
		rel, _ := filepath.Rel(mnt, p)
		got, _ := os.ReadFile(p)
		want, _ := os.ReadFile(filepath.Join(src, rel))
		if !bytes.Equal(got, want) {
			t.Errorf("%s in place but not the served file (%d bytes)", rel, len(got))
		}
		return nil
	})
}

// The pull itself is killed (SIGKILL) once it has written some files: run
// again, it keeps the files in place (they are not fetched again), clears
// what the killed run left, and completes the tree.
func TestFilesPullKilledThenRerun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	src, dst := t.TempDir(), t.TempDir()
	writeTextTree(t, src, 4, 400, 64<<10)
	_, url := startFilesServe(t, src)
	pull := neardupCmd(t, "files", "pull", url, dst)
	if err := pull.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once a file (not a temporary one) is in place.
	deadline := time.Now().Add(30 * time.Second)
	placed := func() bool {
		ents, _ := os.ReadDir(filepath.Join(dst, "d0"))
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".neardup-pull-") {
				return true
			}
		}
		return false
	}
	for time.Now().Before(deadline) && !placed() {
		time.Sleep(time.Millisecond)
	}
	pull.Process.Signal(syscall.SIGKILL)
	killed := pull.Wait() != nil
	out, err := neardupCmd(t, "files", "pull", url, dst, "--json").Output()
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	var res struct {
		Files     int `json:"files"`
		Unchanged int `json:"files_unchanged"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed %v; the rerun found %d of %d files in place", killed, res.Unchanged, res.Files)
	if killed && (res.Unchanged == 0 || res.Unchanged == res.Files) {
		t.Errorf("after a kill mid-pull the rerun found %d of %d files in place", res.Unchanged, res.Files)
	}
	if got, want := treeDigest(t, dst), treeDigest(t, src); got != want {
		t.Fatal("rerun did not complete the tree")
	}
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".neardup-pull-") {
			t.Errorf("left behind after the rerun: %s", p)
		}
		return nil
	})
}
