package identity

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteKeyFile: the file reads back as the key, owner-only; without
// replace an existing file stays and the error is os.ErrExist; with replace
// it is overwritten; no temporary file is left beside it either way.
func TestWriteKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.key")
	k1, k2 := Key{1}, Key{2}
	if err := WriteKeyFile(path, k1, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyFile(path, k2, false); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second exclusive write: %v, want os.ErrExist", err)
	}
	read := func() Key {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		k, err := ParseKey(string(b))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if got := read(); got != k1 {
		t.Fatalf("after the refused write: %v", got)
	}
	if err := WriteKeyFile(path, k2, true); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != k2 {
		t.Fatalf("after replace: %v", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("directory holds %d files, want the key file alone", len(names))
	}
}
