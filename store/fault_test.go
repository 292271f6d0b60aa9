package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/neardup/neardup/store"
)

// inject is an errorfs.Injector that, once switched on, fails the
// filesystem operations match selects with err, the way a full disk or a
// failing one does.
type inject struct {
	on    atomic.Bool
	match func(errorfs.Op) bool
	err   syscall.Errno
	hits  atomic.Int64
}

func (in *inject) String() string { return fmt.Sprintf("inject(%v)", in.err) }

func (in *inject) MaybeError(op errorfs.Op) error {
	if !in.on.Load() || !in.match(op) {
		return nil
	}
	in.hits.Add(1)
	return &os.PathError{Op: "inject", Path: op.Path, Err: in.err}
}

func isWrite(k errorfs.OpKind) bool {
	return k == errorfs.OpFileWrite || k == errorfs.OpFileWriteAt || k == errorfs.OpCreate
}

func isSync(k errorfs.OpKind) bool {
	return k == errorfs.OpFileSync || k == errorfs.OpFileSyncData || k == errorfs.OpFileSyncTo
}

func writesTo(suffix string) func(errorfs.Op) bool {
	return func(op errorfs.Op) bool {
		return isWrite(op.Kind) && strings.Contains(filepath.Base(op.Path), suffix)
	}
}

// faultWait bounds every wait for a fault to surface. The goal is under a
// second; the bound leaves room for a loaded machine (and the race
// detector's slowdown).
const faultWait = 5 * time.Second * slowdown

// within runs fn and fails the test if it does not return within
// faultWait (it is then left running: the point is that it hangs).
func within[T any](t *testing.T, what string, fn func() T) (T, time.Duration) {
	t.Helper()
	done := make(chan T, 1)
	start := time.Now()
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v, time.Since(start)
	case <-time.After(faultWait):
		t.Fatalf("%s did not return within %v; goroutines of Pebble's or the store's:\n%s",
			what, faultWait, strings.Join(pebbleGoroutines(), "\n\n"))
		panic("unreachable")
	}
}

// checkFault checks that err is a one-line storage fault naming dir and
// the injected cause.
func checkFault(t *testing.T, err error, dir string, cause syscall.Errno) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if !errors.Is(err, cause) {
		t.Errorf("error %q does not wrap %v", err, cause)
	}
	if !errors.Is(err, store.ErrFailed) {
		t.Errorf("error %q does not wrap ErrFailed", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, dir) || !strings.HasPrefix(msg, cause.Error()) {
		t.Errorf("error %q: want one line starting with %q and naming %s", msg, cause.Error(), dir)
	}
}

// copyStore copies a store's files, as a disk freed and a new process
// would find them (the lock files stay behind: the failed process is
// gone).
func copyStore(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		in, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
	return dst
}

// checkAcked opens dir and checks that batches 0..acked are all there and
// that the next one is all there or absent.
func checkAcked(t *testing.T, dir string, acked int) {
	t.Helper()
	checkAckedOnly(t, dir, acked, false)
}

// checkAckedOnly is checkAcked; if failedAbsent, the batch whose commit
// failed (the next one) must be absent: its write never reached the disk.
// The ones after it never reached Pebble.
func checkAckedOnly(t *testing.T, dir string, acked int, failedAbsent bool) {
	t.Helper()
	s, err := store.OpenPebble(dir, &store.PebbleOptions{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatalf("reopen after the fault: %v", err)
	}
	defer s.Close()
	for n := 0; n <= acked; n++ {
		checkCrashBatch(t, s, n)
	}
	if _, ok, _ := s.Doc(context.Background(), uint64(acked+1), nil); ok {
		if failedAbsent {
			t.Errorf("batch %d, whose commit failed before its write reached the disk, is there after reopening", acked+1)
		}
		checkCrashBatch(t, s, acked+1)
	}
	for n := acked + 2; n < acked+4; n++ {
		if _, ok, _ := s.Doc(context.Background(), uint64(n), nil); ok {
			t.Errorf("batch %d, committed after the fault, is there after reopening", n)
		}
	}
}

// pebbleGoroutines returns the stacks of the goroutines running Pebble's
// code or this store's.
func pebbleGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "cockroachdb/pebble") || strings.Contains(g, "neardup/neardup/store.") {
			out = append(out, g)
		}
	}
	return out
}

// pebbleBefore counts the goroutines of Pebble's or the store's before a
// test opens its store, once those of stores closed before have ended
// (they end shortly after Close returns), or after a second.
func pebbleBefore(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		n := len(pebbleGoroutines())
		if n == 0 || time.Now().After(deadline) {
			if n > 0 {
				t.Logf("%d goroutines of Pebble's or the store's run before the test", n)
			}
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkNoPebble fails the test unless, within faultWait, no more goroutines
// of Pebble's or the store's run than before (the count taken before the
// store was opened): a closed store, failed or not, leaves nothing behind.
func checkNoPebble(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(faultWait)
	for {
		gs := pebbleGoroutines()
		if len(gs) <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of Pebble's or the store's still run after Close (%d before Open):\n%s",
				len(gs), before, strings.Join(gs, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type faultCase struct {
	name  string
	match func(errorfs.Op) bool
	err   syscall.Errno
	// prepare runs before the fault is switched on.
	prepare func(t *testing.T, s *store.Pebble, b store.Batch, next *int)
	// act meets the fault: it returns the first error, or nil if none
	// came; next is the next batch number (batches before it are
	// acknowledged).
	act func(s *store.Pebble, b store.Batch, next *int) error
	// failedAbsent: the batch whose commit failed must be absent when the
	// store is reopened (the fault came before its write reached the
	// disk; after a failed sync the write may be there).
	failedAbsent bool
	// partial: the failing write writes half its bytes before it fails,
	// as a real full disk can (partialFS), rather than none (errorfs).
	partial bool
}

// partialFS fails the writes in selects the way a full disk does in the
// middle of a write: half of the bytes are written, then the error.
type partialFS struct {
	vfs.FS
	in *inject
}

func (fs partialFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs partialFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

func (fs partialFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs partialFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return partialFile{File: f, in: fs.in, name: name}, nil
}

type partialFile struct {
	vfs.File
	in   *inject
	name string
}

func (f partialFile) Write(p []byte) (int, error) {
	if f.in.on.Load() && f.in.match(errorfs.Op{Kind: errorfs.OpFileWrite, Path: f.name}) {
		f.in.hits.Add(1)
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &os.PathError{Op: "write", Path: f.name, Err: f.in.err}
	}
	return f.File.Write(p)
}

// commitUntilError commits batches until one fails (at most 2,000).
func commitUntilError(_ *store.Pebble, b store.Batch, next *int) error {
	for range 2000 {
		writeCrashBatch(b, *next)
		if err := b.Commit(context.Background()); err != nil {
			return err
		}
		*next++
	}
	return nil
}

// threeTables flushes three tables of five batches each into L0, below
// Pebble's compaction threshold.
func threeTables(t *testing.T, s *store.Pebble, b store.Batch, next *int) {
	for range 3 {
		commitBatches(t, b, next, 5)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

// compactAndWrite compacts, then writes five more batches of overlapping
// keys, five times over, and returns the first error: Pebble may have
// compacted the tables of threeTables on its own before the fault is on
// (or moved them without reading), leaving a compaction nothing to write
// or read, so each round gives it new overlapping tables.
func compactAndWrite(s *store.Pebble, b store.Batch, next *int) error {
	for range 5 {
		if err := s.Compact(context.Background()); err != nil {
			return err
		}
		for range 5 {
			writeCrashBatch(b, *next)
			if err := b.Commit(context.Background()); err != nil {
				return err
			}
			*next++
		}
	}
	return nil
}

func commitBatches(t *testing.T, b store.Batch, next *int, n int) {
	t.Helper()
	for range n {
		writeCrashBatch(b, *next)
		if err := b.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		*next++
	}
}

// TestPebbleFaults injects ENOSPC, EIO and failed syncs into each stage of
// a Pebble store's life — write-ahead-log writes and syncs (Commit),
// flushes, compactions, MANIFEST updates, Close — through Pebble's
// errorfs, and checks that each surfaces as a one-line error naming the
// directory and the cause, within faultWait (the goal is under a second;
// the latency is logged), that the failed store refuses later work at
// once, that nothing panics, that Close returns and leaves no goroutine of
// Pebble's running (Pebble is closed, never abandoned), and that every
// batch acknowledged before the fault is there when the store is reopened
// without the fault, in place or copied, and none that failed before its
// write reached the disk.
func TestPebbleFaults(t *testing.T) {
	logCreate := func(op errorfs.Op) bool { return op.Kind == errorfs.OpCreate && strings.HasSuffix(op.Path, ".log") }
	logSync := func(op errorfs.Op) bool { return isSync(op.Kind) && strings.HasSuffix(op.Path, ".log") }
	cases := []faultCase{
		{name: "wal-write-enospc", match: writesTo(".log"), err: syscall.ENOSPC, act: commitUntilError, failedAbsent: true},
		{name: "wal-write-eio", match: writesTo(".log"), err: syscall.EIO, act: commitUntilError, failedAbsent: true},
		// Half the failing write reaches the log: reopening finds a torn
		// record at its end and drops it.
		{name: "wal-write-partial-enospc", match: writesTo(".log"), err: syscall.ENOSPC, act: commitUntilError, failedAbsent: true, partial: true},
		{name: "wal-sync-eio", err: syscall.EIO, act: commitUntilError, match: logSync},
		{name: "wal-sync-enospc", err: syscall.ENOSPC, act: commitUntilError, match: logSync},
		// A new log, made when the memtable fills: the commit that
		// needed it fails.
		{name: "wal-create-enospc", err: syscall.ENOSPC, act: commitUntilError, match: logCreate, failedAbsent: true},
		{name: "wal-create-eio", err: syscall.EIO, act: commitUntilError, match: logCreate, failedAbsent: true},
		// A failed sync of the log being closed when the memtable is
		// flushed: Pebble panics there with its mutex released, a fatal
		// error no recover stops (see pebble_fault.go).
		{name: "wal-rotate-eio", err: syscall.EIO,
			match: func(op errorfs.Op) bool { return isSync(op.Kind) && strings.HasSuffix(op.Path, ".log") },
			act:   func(s *store.Pebble, _ store.Batch, _ *int) error { return s.Compact(context.Background()) }},
		{name: "flush-enospc", match: writesTo(".sst"), err: syscall.ENOSPC, act: commitUntilError},
		{name: "flush-partial-enospc", match: writesTo(".sst"), err: syscall.ENOSPC, act: commitUntilError, partial: true},
		{name: "flush-sync-eio", err: syscall.EIO, act: commitUntilError,
			match: func(op errorfs.Op) bool { return isSync(op.Kind) && strings.HasSuffix(op.Path, ".sst") }},
		{name: "manifest-enospc", match: writesTo("MANIFEST"), err: syscall.ENOSPC, act: commitUntilError},
		{name: "compaction-enospc", match: writesTo(".sst"), err: syscall.ENOSPC,
			prepare: threeTables,
			// Pebble may have compacted the tables on its own before the
			// fault is on, leaving Compact nothing to write: then more
			// overlapping tables are written and compacted.
			act: compactAndWrite},
		{name: "compaction-read-eio", err: syscall.EIO,
			match: func(op errorfs.Op) bool {
				return op.Kind == errorfs.OpFileReadAt && strings.HasSuffix(op.Path, ".sst")
			},
			prepare: threeTables,
			// Pebble may have compacted the tables (or may move them
			// without reading) before the fault is on: then more
			// overlapping tables are flushed and compacted, which
			// reads them (a flushed table is not in the cache).
			act: compactAndWrite},
		{name: "close-enospc", match: writesTo(".sst"), err: syscall.ENOSPC,
			act: func(s *store.Pebble, _ store.Batch, _ *int) error { return s.Close() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runFault(t, c) })
	}
}

func runFault(t *testing.T, c faultCase) {
	before := pebbleBefore(t)
	dir := filepath.Join(t.TempDir(), "index")
	in := &inject{match: c.match, err: c.err}
	var fs vfs.FS = errorfs.Wrap(vfs.Default, in)
	if c.partial {
		fs = partialFS{FS: vfs.Default, in: in}
	}
	s, err := store.OpenPebble(dir, &store.PebbleOptions{
		FS: fs, CacheBytes: 8 << 20, MemTableBytes: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	next := 0
	commitBatches(t, b, &next, 10)
	if c.prepare != nil {
		c.prepare(t, s, b, &next)
	}
	in.on.Store(true)
	err, took := within(t, c.name, func() error { return c.act(s, b, &next) })
	if err == nil {
		t.Fatalf("the fault never surfaced (%d injected errors)", in.hits.Load())
	}
	t.Logf("fault surfaced after %v (%d injected): %v", took, in.hits.Load(), err)
	checkFault(t, err, dir, c.err)
	acked := next - 1

	if c.name == "flush-enospc" || c.name == "compaction-read-eio" || c.name == "compaction-enospc" {
		// Pebble retries a failed flush or compaction at once and for
		// ever; the failed store must not spin a core meanwhile (it used
		// to, at 100%): flushes now finish in memory, and a refused
		// compaction output is refused once a second.
		cpu := processCPU()
		time.Sleep(time.Second)
		if used := time.Duration(processCPU() - cpu); cpu >= 0 && used > 300*time.Millisecond*slowdown {
			t.Errorf("a failed store used %v of CPU in 1s", used)
		} else {
			t.Logf("CPU used in the second after the fault: %v", used)
		}
	}
	if c.name != "close-enospc" {
		// The failed store refuses further work at once, with the fault.
		writeCrashBatch(b, next)
		err2, took2 := within(t, "commit after the fault", func() error { return b.Commit(context.Background()) })
		if err2 == nil || took2 > time.Second*slowdown {
			t.Errorf("commit after the fault: %v after %v, want the fault at once", err2, took2)
		}
		if _, err := s.Postings(context.Background(), 1, nil); !errors.Is(err, store.ErrFailed) {
			t.Errorf("read after the fault: %v, want ErrFailed", err)
		}
		b.Close()
		closeErr, tookClose := within(t, "Close", s.Close)
		t.Logf("Close after %v: %v", tookClose, closeErr)
		checkFault(t, closeErr, dir, c.err)
	}
	checkNoPebble(t, before)

	in.on.Store(false) // the disk is freed; a new process opens the store
	checkAckedOnly(t, copyStore(t, dir), acked, c.failedAbsent)
	checkAckedOnly(t, dir, acked, c.failedAbsent) // in place: Close released it
}

// TestPebbleOpenFaults fails each kind of write while a store is created
// and while an existing one is opened: OpenPebble returns a one-line error
// naming the directory and the cause, or succeeds; it never panics or
// hangs, and once the fault is gone the store opens with its data.
func TestPebbleOpenFaults(t *testing.T) {
	for _, file := range []string{"MANIFEST", "dbtmp", ".log", "marker"} {
		for _, existing := range []bool{false, true} {
			for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
				name := fmt.Sprintf("%s-existing=%v-%v", strings.Trim(file, "."), existing, int(errno))
				t.Run(name, func(t *testing.T) {
					dir := filepath.Join(t.TempDir(), "index")
					acked := -1
					if existing {
						s := openPebble(t, dir)
						b := s.NewBatch()
						next := 0
						commitBatches(t, b, &next, 3)
						acked = next - 1
						b.Close()
						if err := s.Close(); err != nil {
							t.Fatal(err)
						}
					}
					in := &inject{err: errno, match: func(op errorfs.Op) bool {
						return (isWrite(op.Kind) || isSync(op.Kind)) && strings.Contains(filepath.Base(op.Path), file)
					}}
					in.on.Store(true)
					before := pebbleBefore(t)
					type result struct {
						s   *store.Pebble
						err error
					}
					r, took := within(t, "OpenPebble", func() result {
						s, err := store.OpenPebble(dir, &store.PebbleOptions{FS: errorfs.Wrap(vfs.Default, in), CacheBytes: 8 << 20})
						return result{s, err}
					})
					if r.err == nil {
						if in.hits.Load() > 0 {
							t.Errorf("open succeeded although %d writes failed", in.hits.Load())
						}
						r.s.Close()
					} else {
						t.Logf("open failed after %v: %v", took, r.err)
						checkFault(t, r.err, dir, errno)
					}
					checkNoPebble(t, before)
					in.on.Store(false)
					if acked >= 0 {
						checkAcked(t, copyStore(t, dir), acked)
						checkAcked(t, dir, acked) // in place: the failed open released it
					} else {
						for _, d := range []string{copyStore(t, dir), dir} {
							if s, err := store.OpenPebble(d, nil); err != nil {
								t.Errorf("open after the fault: %v", err)
							} else {
								s.Close()
							}
						}
					}
				})
			}
		}
	}
}
