package store_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/store"
)

// TestPebbleOneOwner checks that a store is opened once: a second open in
// the same process fails at once with ErrInUse naming the directory, and
// works again after Close.
func TestPebbleOneOwner(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	s := openPebble(t, dir)
	_, err := store.OpenPebble(dir, nil)
	if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), "store "+dir+" is in use by this process") {
		t.Errorf("second open: %v", err)
	}
	if _, err := store.OpenPebble(dir, &store.PebbleOptions{ReadOnly: true}); !errors.Is(err, store.ErrInUse) {
		t.Errorf("second, read-only open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openPebble(t, dir)
	s.Close()
}

// TestPebbleNotStore checks that a directory that is neither empty nor a
// store is refused and left untouched, and that an empty or missing one
// becomes a store.
func TestPebbleNotStore(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := store.OpenPebble(dir, nil)
	if !errors.Is(err, store.ErrNotStore) || !strings.Contains(err.Error(), dir) {
		t.Errorf("open a directory holding a file: %v, want ErrNotStore naming it", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the refused directory was written to: %d entries", len(entries))
	}

	empty := t.TempDir()
	s := openPebble(t, empty)
	s.Close()
	s = openPebble(t, empty) // now a store
	s.Close()

	missing := filepath.Join(t.TempDir(), "a", "b")
	if _, err := store.OpenPebble(missing, &store.PebbleOptions{ReadOnly: true}); err == nil {
		t.Error("read-only open of a missing store succeeded")
	}
	s = openPebble(t, missing)
	s.Close()
}

const lockChildEnv = "NEARDUP_STORE_LOCK_CHILD"

// TestLockDirChild is the child of TestLockDir: it locks the directory,
// prints "locked" and holds the lock until its stdin closes.
func TestLockDirChild(t *testing.T) {
	dir := os.Getenv(lockChildEnv)
	if dir == "" {
		t.Skip("only run as the child of TestLockDir")
	}
	unlock, err := store.LockDir(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	unlock()
	os.Exit(0)
}

// TestLockDir checks the output-directory lock within a process and
// across processes.
func TestLockDir(t *testing.T) {
	if os.Getenv(lockChildEnv) != "" {
		t.Skip("child")
	}
	out := filepath.Join(t.TempDir(), "out")
	unlock, err := store.LockDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.LockDir(out); !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), "directory "+out+" is in use") {
		t.Errorf("second LockDir in one process: %v", err)
	}
	// A store inside the locked directory has a lock of its own.
	s := openPebble(t, filepath.Join(out, "index"))
	s.Close()
	if err := unlock(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestLockDirChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+out)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("child: %q", line)
	}
	_, err = store.LockDir(out)
	want := fmt.Sprintf("directory %s is in use by another neardup process (pid %d)", out, cmd.Process.Pid)
	if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), want) {
		t.Errorf("LockDir held by another process: %v, want %q", err, want)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	unlock, err = store.LockDir(out) // released by the child's exit
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}
