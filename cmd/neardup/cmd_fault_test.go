package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// storeFault is an errorfs.Injector that, once on, fails the filesystem
// operations of a store that match, as a full or failing disk does, and
// remembers when it first did.
type storeFault struct {
	on    atomic.Bool
	match func(errorfs.Op) bool
	err   syscall.Errno
	hits  atomic.Int64
	first atomic.Int64 // unix nanoseconds of the first injected error
}

func (in *storeFault) String() string { return fmt.Sprintf("storeFault(%v)", in.err) }

func (in *storeFault) MaybeError(op errorfs.Op) error {
	if !in.on.Load() || !in.match(op) {
		return nil
	}
	if in.hits.Add(1) == 1 {
		in.first.Store(time.Now().UnixNano())
	}
	return &os.PathError{Op: "inject", Path: op.Path, Err: in.err}
}

func opIsWrite(k errorfs.OpKind) bool {
	return k == errorfs.OpFileWrite || k == errorfs.OpFileWriteAt || k == errorfs.OpCreate
}

func opIsSync(k errorfs.OpKind) bool {
	return k == errorfs.OpFileSync || k == errorfs.OpFileSyncData || k == errorfs.OpFileSyncTo
}

// faultStages are the storage faults tried at each stage of a command's
// use of its store: the write-ahead log (every commit), tables (flushes,
// compaction, the final Compact), the MANIFEST (every flush), and files
// created at all (open).
var faultStages = []struct {
	name  string
	err   syscall.Errno
	match func(errorfs.Op) bool
}{
	{"wal-write-enospc", syscall.ENOSPC, func(op errorfs.Op) bool { return opIsWrite(op.Kind) && strings.HasSuffix(op.Path, ".log") }},
	{"wal-sync-eio", syscall.EIO, func(op errorfs.Op) bool { return opIsSync(op.Kind) && strings.HasSuffix(op.Path, ".log") }},
	{"table-write-enospc", syscall.ENOSPC, func(op errorfs.Op) bool { return opIsWrite(op.Kind) && strings.HasSuffix(op.Path, ".sst") }},
	{"table-sync-eio", syscall.EIO, func(op errorfs.Op) bool { return opIsSync(op.Kind) && strings.HasSuffix(op.Path, ".sst") }},
	{"table-read-eio", syscall.EIO, func(op errorfs.Op) bool { return op.Kind == errorfs.OpFileReadAt && strings.HasSuffix(op.Path, ".sst") }},
	{"manifest-write-enospc", syscall.ENOSPC, func(op errorfs.Op) bool {
		return opIsWrite(op.Kind) && strings.Contains(filepath.Base(op.Path), "MANIFEST")
	}},
	{"manifest-sync-eio", syscall.EIO, func(op errorfs.Op) bool {
		return opIsSync(op.Kind) && strings.Contains(filepath.Base(op.Path), "MANIFEST")
	}},
	{"create-enospc", syscall.ENOSPC, func(op errorfs.Op) bool { return op.Kind == errorfs.OpCreate }},
}

// mainWithFS runs neardup in this process with its stores on fs.
func mainWithFS(fs vfs.FS, args ...string) (code int, stdout, stderr string) {
	env, out, errb := testEnv()
	env.StoreFS = fs
	func() {
		defer func() {
			if r := recover(); r != nil {
				code = -1
				fmt.Fprintf(errb, "PANIC: %v", r)
			}
		}()
		code = Main(context.Background(), args, env)
	}()
	return code, out.String(), errb.String()
}

// checkFaultExit checks a command's end under an injected fault: exit 1,
// within a second of the first injected error (two on a loaded machine),
// one line naming the cause and the store.
func checkFaultExit(t *testing.T, in *storeFault, code int, stderr, dir string) {
	t.Helper()
	end := time.Now()
	if in.hits.Load() == 0 {
		t.Fatalf("the fault was never injected (exit %d: %s)", code, stderr)
	}
	took := end.Sub(time.Unix(0, in.first.Load()))
	msg := strings.TrimSpace(stderr)
	t.Logf("exit %d %v after the fault (%d injected): %s", code, took.Round(time.Millisecond), in.hits.Load(), msg)
	if code != ExitFailure {
		t.Errorf("exit %d, want %d", code, ExitFailure)
	}
	if took > 2*time.Second {
		t.Errorf("returned %v after the fault", took)
	}
	if strings.Contains(msg, "\n") || !strings.Contains(msg, in.err.Error()) || !strings.Contains(msg, dir) {
		t.Errorf("message %q: want one line naming %q and %s", msg, in.err.Error(), dir)
	}
}

// checkAcknowledged checks, on a copy of the store (as a new process
// finds it once the disk is freed), that index check finds it sound and
// every document of the acknowledged file is there.
func checkAcknowledged(t *testing.T, idx, acked string, n int) {
	t.Helper()
	cp := copyDir(t, idx)
	if code, out, errs := runMain("index", "check", "--store", cp); code != 0 {
		t.Errorf("index check after the fault: exit %d: %s %s", code, out, errs)
	}
	code, out, errs := runMain("index", "query", "--store", cp, acked)
	if code != 0 {
		t.Fatalf("query after the fault: exit %d: %s", code, errs)
	}
	found := 0
	for line := range strings.Lines(out) {
		var q queryJSON
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		for _, m := range q.Matches {
			if m.ID == q.ID && m.Similarity == 1 {
				found++
				break
			}
		}
	}
	if found != n {
		t.Errorf("%d of the %d acknowledged documents are found after the fault", found, n)
	}
}

// splitDocs writes the first 2n records of the sample corpus as two
// files of n: the acknowledged ones and the ones added under the fault.
func splitDocs(t *testing.T, dir string, n int) (acked, more string) {
	t.Helper()
	all, err := os.ReadFile(firstDocs(t, dir, 2*n))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(all), "\n")
	acked, more = filepath.Join(dir, "acked.jsonl"), filepath.Join(dir, "more.jsonl")
	os.WriteFile(acked, []byte(strings.Join(lines[:n], "")), 0o644)
	os.WriteFile(more, []byte(strings.Join(lines[n:2*n], "")), 0o644)
	return acked, more
}

// TestIndexAddFaults: index add on a store whose disk fails (ENOSPC, EIO,
// a failed fsync) at each stage exits 1 within a second with one line
// naming the cause and the store, and what an earlier run acknowledged is
// all there afterwards.
func TestIndexAddFaults(t *testing.T) {
	for _, st := range faultStages {
		t.Run(st.name, func(t *testing.T) {
			dir := t.TempDir()
			acked, more := splitDocs(t, dir, 40)
			idx := filepath.Join(dir, "idx")
			in := &storeFault{match: st.match, err: st.err}
			fs := errorfs.Wrap(vfs.Default, in)
			if code, _, errs := mainWithFS(fs, "index", "add", "-q", "--store", idx, acked); code != 0 {
				t.Fatalf("the acknowledged add: exit %d: %s", code, errs)
			}
			in.on.Store(true)
			code, _, errs := mainWithFS(fs, "index", "add", "-q", "--store", idx, more)
			checkFaultExit(t, in, code, errs, idx)
			checkAcknowledged(t, idx, acked, 40)
		})
	}
}

// TestDedupFaults: dedup against an existing index whose disk fails at
// each stage, and with its default store (OUT/index), exits 1 within a
// second with one line naming the cause and the store; the earlier run's
// documents are all in the index afterwards.
func TestDedupFaults(t *testing.T) {
	for _, st := range faultStages {
		t.Run(st.name, func(t *testing.T) {
			dir := t.TempDir()
			acked, more := splitDocs(t, dir, 40)
			idx := filepath.Join(dir, "idx")
			in := &storeFault{match: st.match, err: st.err}
			fs := errorfs.Wrap(vfs.Default, in)
			if code, _, errs := mainWithFS(fs, "dedup", "-q", "--store", idx, "--out", filepath.Join(dir, "o1"), acked); code != 0 {
				t.Fatalf("the acknowledged dedup: exit %d: %s", code, errs)
			}
			in.on.Store(true)
			code, _, errs := mainWithFS(fs, "dedup", "-q", "--store", idx, "--out", filepath.Join(dir, "o2"), more)
			checkFaultExit(t, in, code, errs, idx)
			checkAcknowledged(t, idx, acked, 40)

			// The default store, OUT/index.
			in2 := &storeFault{match: st.match, err: st.err}
			in2.on.Store(true)
			out := filepath.Join(dir, "o3")
			code, _, errs = mainWithFS(errorfs.Wrap(vfs.Default, in2), "dedup", "-q", "--out", out, more)
			checkFaultExit(t, in2, code, errs, filepath.Join(out, "index"))
		})
	}
}

// TestDedupOutputFaults: the output files of dedup on a full disk
// (/dev/full behind each name) fail the run with one line naming the file
// and the cause.
func TestDedupOutputFaults(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	docs := firstDocs(t, dir, 40)
	f, _ := os.OpenFile(docs, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json\n") // one rejected record, for rejected.jsonl
	f.Close()
	for _, name := range []string{"rejected.jsonl", "pairs.jsonl", "clusters.jsonl", "removed.jsonl", "summary.json"} {
		out := filepath.Join(dir, "out-"+name)
		os.MkdirAll(out, 0o755)
		if err := os.Symlink("/dev/full", filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runMain("dedup", "-q", "--max-rejected", "1", "--out", out, docs)
		msg := strings.TrimSpace(errs)
		if code != ExitFailure || strings.Contains(msg, "\n") || !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, filepath.Join(out, name)) {
			t.Errorf("%s on a full disk: exit %d: %q", name, code, msg)
		}
	}
}

// TestIndexBackupFaults: index backup onto a full (ENOSPC) or failing
// (EIO: writes, then syncs) backup disk exits 1 within a second with one
// line naming the cause and the backup, leaves nothing at the backup's
// path, and the index is unharmed: index check passes and every document
// is there; once the disk is freed the backup succeeds.
func TestIndexBackupFaults(t *testing.T) {
	syncs := func(k errorfs.OpKind) bool { return opIsSync(k) }
	writes := func(k errorfs.OpKind) bool { return opIsWrite(k) || k == errorfs.OpMkdirAll || k == errorfs.OpLink }
	for _, c := range []struct {
		name string
		err  syscall.Errno
		kind func(errorfs.OpKind) bool
	}{
		{"write-enospc", syscall.ENOSPC, writes},
		{"write-eio", syscall.EIO, writes},
		{"sync-eio", syscall.EIO, syncs},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			acked, _ := splitDocs(t, dir, 40)
			idx, bk := filepath.Join(dir, "idx"), filepath.Join(dir, "bk")
			// errorfs names a link by its source: a link of the index's
			// tables is a write of the backup's.
			in := &storeFault{err: c.err, match: func(op errorfs.Op) bool {
				return c.kind(op.Kind) && (strings.HasPrefix(op.Path, bk) || op.Kind == errorfs.OpLink)
			}}
			fs := errorfs.Wrap(vfs.Default, in)
			if code, _, errs := mainWithFS(fs, "index", "add", "-q", "--store", idx, acked); code != 0 {
				t.Fatalf("index add: exit %d: %s", code, errs)
			}
			in.on.Store(true)
			code, _, errs := mainWithFS(fs, "index", "backup", "--store", idx, bk)
			checkFaultExit(t, in, code, errs, bk)
			if _, err := os.Lstat(bk); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed backup left %s (%v)", bk, err)
			}
			if left, _ := filepath.Glob(bk + ".partial-*"); len(left) > 0 && !strings.Contains(errs, left[0]) {
				t.Errorf("a partial copy %s is left and the error does not name it", left[0])
			}
			in.on.Store(false)
			checkAcknowledged(t, idx, acked, 40)
			if code, _, errs := mainWithFS(fs, "index", "backup", "--store", idx, bk); code != 0 {
				t.Fatalf("backup once the disk is freed: exit %d: %s", code, errs)
			}
		})
	}
}
