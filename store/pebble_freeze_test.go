package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestFaultFSFreeze checks the frozen directory of pebble_freeze.go
// directly: after the fault nothing in the directory changes on disk,
// while the store's Pebble sees the files it wrote, renamed and removed.
func TestFaultFSFreeze(t *testing.T) {
	dir := t.TempDir()
	h := newHealth(dir)
	fs := &faultFS{FS: vfs.Default, h: h}
	p := func(name string) string { return filepath.Join(dir, name) }
	disk := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(p(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	read := func(name string) string {
		t.Helper()
		f, err := fs.Open(p(name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, fi.Size())
		if n, err := f.ReadAt(b, 0); err != nil && !(err == io.EOF && n == len(b)) {
			t.Fatalf("read %s: %v", name, err)
		}
		return string(b)
	}
	write := func(f vfs.File, s string) {
		t.Helper()
		if n, err := f.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("write %q: %d %v", s, n, err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}

	table, err := fs.Create(p("000005.sst"), "pebble-memtable-flush")
	if err != nil {
		t.Fatal(err)
	}
	write(table, "before|")
	log, err := fs.Create(p("000004.log"), "pebble-wal")
	if err != nil {
		t.Fatal(err)
	}
	write(log, "acked|")
	compaction, err := fs.Create(p("000006.sst"), "pebble-compaction")
	if err != nil {
		t.Fatal(err)
	}
	write(compaction, "c|")
	if err := os.WriteFile(p("OPTIONS-000003"), []byte("options"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.startClosing() // no backoff in this test

	h.failWith("write-ahead log", &os.PathError{Op: "write", Path: p("000004.log"), Err: syscall.ENOSPC})

	// Open files: the log drops, the flush goes on in memory, the
	// compaction fails.
	write(log, "dropped|")
	write(table, "after")
	if _, err := compaction.Write([]byte("x")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("compaction write after the fault: %v, want the fault", err)
	}
	if got := read("000005.sst"); got != "before|after" {
		t.Errorf("flush output reads %q, want %q", got, "before|after")
	}
	buf := make([]byte, 5)
	if n, err := table.ReadAt(buf, 3); n != 5 || string(buf) != "ore|a" {
		t.Errorf("ReadAt across the fault: %d %q %v", n, buf, err)
	}
	// New files, renames and removals live in memory.
	m, err := fs.Create(p("MANIFEST-000007"), "pebble-manifest")
	if err != nil {
		t.Fatal(err)
	}
	write(m, "edit")
	tmp, err := fs.Create(p("OPTIONS-000008.dbtmp"), vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	write(tmp, "new options")
	if err := fs.Rename(p("OPTIONS-000008.dbtmp"), p("OPTIONS-000008")); err != nil {
		t.Fatal(err)
	}
	if err := fs.Rename(p("OPTIONS-000003"), p("OPTIONS-000009")); err != nil {
		t.Fatal(err)
	}
	if got := read("OPTIONS-000009"); got != "options" {
		t.Errorf("renamed disk file reads %q", got)
	}
	if got := read("OPTIONS-000008"); got != "new options" {
		t.Errorf("new file reads %q", got)
	}
	if err := fs.Remove(p("000004.log")); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(p("000004.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removed log: stat %v", err)
	}
	if err := fs.Remove(p("000004.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removed twice: %v", err)
	}
	if _, err := fs.Create(p("000010.sst"), "pebble-compaction"); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("new compaction output: %v, want the fault", err)
	}
	if err := fs.Link(p("000005.sst"), p("000011.sst")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("link (ingestion): %v, want the fault", err)
	}
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"000005.sst", "000006.sst", "MANIFEST-000007", "OPTIONS-000008", "OPTIONS-000009"}
	if !slices.Equal(names, want) {
		t.Errorf("List = %v, want %v", names, want)
	}
	for _, f := range []vfs.File{table, log, compaction, m, tmp} {
		f.Close()
	}

	// The disk is as it was at the fault.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	if want := []string{"000004.log", "000005.sst", "000006.sst", "OPTIONS-000003"}; !slices.Equal(onDisk, want) {
		t.Errorf("on disk after the fault: %v, want %v", onDisk, want)
	}
	for name, want := range map[string]string{"000004.log": "acked|", "000005.sst": "before|", "000006.sst": "c|", "OPTIONS-000003": "options"} {
		if got := disk(name); got != want {
			t.Errorf("%s on disk: %q, want %q", name, got, want)
		}
	}
}
