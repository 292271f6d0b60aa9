package store

// How a Pebble store turns storage faults into errors.
//
// Pebble treats some I/O failures as fatal and calls Logger.Fatalf (a
// failed WAL write or sync during a commit, a failed MANIFEST write), and
// retries a failed flush or compaction at once and for ever, reporting
// each failure to EventListener.BackgroundError; a commit that needs a
// flush then waits in a write stall that never ends. Left alone that is a
// panic (Fatalf) or a hang at 100% CPU that ignores SIGTERM. Here:
//
//   - health records the first fault; from then on every operation
//     returns it at once (ErrFailed), and operations already waiting on
//     Pebble (a commit in a write stall, a flush, an ingestion) are
//     abandoned: they run on goroutines of their own and the caller waits
//     for either their result or the fault.
//   - The event listener records background errors (flush, compaction,
//     ingestion, table stats) as faults, and corruption reports as the
//     file to name.
//   - The logger's Fatalf records the fault and then ends the goroutine
//     that called it without a panic escaping: under one of this
//     package's calls it panics with a value that the call's recover turns
//     into the error; on one of Pebble's background goroutines it calls
//     runtime.Goexit, which runs that goroutine's deferred unlocks and
//     ends it, leaving the rest of the process running.
//   - faultFS, wrapped around the filesystem, remembers the last I/O error
//     and its file (Fatalf only gets a formatted string), and once the
//     store has failed makes Pebble's endless flush retries wait up to a
//     second each, so a failed store does not spin a core while the
//     process reports the error and exits.
//   - A failed write, sync or creation of a write-ahead log is never
//     returned to Pebble: faultFS records the fault and parks the calling
//     goroutine for good. Pebble cannot go on after such a failure, and
//     where it meets one while switching logs (rotateWAL) it panics with
//     its mutex released, which ends in "fatal error: sync: unlock of
//     unlocked mutex", a crash that no recover can stop. Parked, the log
//     ends at its last good write, which reopening reads as a torn tail;
//     every acknowledged commit was synced before it.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// health is the fault state of one store.
type health struct {
	dir    string
	fault  atomic.Pointer[FaultError]
	failed chan struct{} // closed when fault is set
	once   sync.Once

	closing     chan struct{} // closed when Close starts: no more waits in faultFS
	closingOnce sync.Once

	// parked is closed when faultFS parks a goroutine of Pebble's for good
	// (a failed write-ahead log): Pebble's Close, which waits for it,
	// cannot finish, so Close does not wait for it either.
	parked     chan struct{}
	parkedOnce sync.Once

	// abandoned is closed when this package gives up waiting for Pebble
	// (an Open or a Close that cannot finish on a failed store): from
	// then on every filesystem call of that Pebble parks for good, so
	// that its goroutines, still running, neither touch the directory
	// nor meet its files gone (a test's directory removed, a later run's
	// store) and panic in a background job.
	abandoned   chan struct{}
	abandonOnce sync.Once

	mu      sync.Mutex
	lastIO  ioFault // the last I/O error faultFS saw
	corrupt string  // the last file Pebble reported corrupt
}

type ioFault struct {
	op, file string
	err      error
}

func newHealth(dir string) *health {
	return &health{dir: dir, failed: make(chan struct{}), closing: make(chan struct{}), parked: make(chan struct{}), abandoned: make(chan struct{})}
}

// abandon marks the store's Pebble abandoned (see health.abandoned).
func (h *health) abandon() { h.abandonOnce.Do(func() { close(h.abandoned) }) }

// hold parks the calling goroutine for good once Pebble is abandoned.
func (h *health) hold() {
	select {
	case <-h.abandoned:
		select {}
	default:
	}
}

// err returns the recorded fault, or nil.
func (h *health) err() error {
	if f := h.fault.Load(); f != nil {
		return f
	}
	return nil
}

// fail records a fault (the first one wins) and returns the recorded one.
func (h *health) fail(f *FaultError) *FaultError {
	if h.fault.CompareAndSwap(nil, f) {
		h.once.Do(func() { close(h.failed) })
	}
	return h.fault.Load()
}

// failWith records err as a fault met during op, naming the file and the
// system error from faultFS when err itself does not carry them.
func (h *health) failWith(op string, err error) *FaultError {
	return h.fail(h.describe(op, err))
}

// describe makes a FaultError of err met during op: corruption is marked,
// and an error that lost its cause in formatting (Fatalf's) gets the last
// I/O error faultFS saw.
func (h *health) describe(op string, err error) *FaultError {
	var fe *FaultError
	if errors.As(err, &fe) {
		return fe
	}
	f := &FaultError{Dir: h.dir, Op: op, Err: err}
	if pebble.IsCorruptionError(err) || errors.Is(err, ErrCorrupt) {
		f.Corrupt = true
		h.mu.Lock()
		f.File = h.corrupt
		h.mu.Unlock()
		if f.File == "" {
			f.File = fileIn(err.Error())
		}
		return f
	}
	h.mu.Lock()
	last := h.lastIO
	h.mu.Unlock()
	if last.err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			// Pebble's fatal paths format the cause away; use the one
			// the filesystem returned.
			f.Err = fmt.Errorf("%w (%s)", last.err, oneLine(err))
		}
		f.File = last.file
	}
	return f
}

// fileIn finds a Pebble file name (000123.sst, MANIFEST-000001, ...) in a
// message, for corruption reports that carry no path.
func fileIn(msg string) string {
	for _, w := range strings.FieldsFunc(msg, func(r rune) bool {
		return r == ' ' || r == ':' || r == '"' || r == '(' || r == ')' || r == ','
	}) {
		base := filepath.Base(w)
		if strings.HasSuffix(base, ".sst") || strings.HasSuffix(base, ".log") || strings.HasSuffix(base, ".blob") ||
			strings.HasPrefix(base, "MANIFEST-") || strings.HasPrefix(base, "OPTIONS-") {
			return base
		}
	}
	return ""
}

// noteCorrupt remembers the file Pebble reported corrupt.
func (h *health) noteCorrupt(path string) {
	h.mu.Lock()
	h.corrupt = filepath.Base(path)
	h.mu.Unlock()
}

func (h *health) noteIO(op, path string, err error) {
	h.mu.Lock()
	h.lastIO = ioFault{op: op, file: filepath.Base(path), err: err}
	h.mu.Unlock()
}

// startClosing ends faultFS's waits, so that Close is not delayed.
func (h *health) startClosing() { h.closingOnce.Do(func() { close(h.closing) }) }

// retryWait is how long faultFS holds each write of a failed store, which
// turns Pebble's immediate flush retries into one attempt a second.
const retryWait = time.Second

// backoff waits, on a store failed by an I/O fault and until Close
// starts, before a write operation is attempted.
func (h *health) backoff() {
	if f := h.fault.Load(); f == nil || f.Corrupt {
		return // a corrupt file is no reason to hold writes
	}
	t := time.NewTimer(retryWait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-h.closing:
	}
}

// listener returns the Pebble event listener that records faults.
func (h *health) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			if errors.Is(err, pebble.ErrCancelledCompaction) || errors.Is(err, pebble.ErrClosed) {
				return
			}
			h.failWith(opOf(err, "background work"), err)
		},
		// Failed flushes and compactions come as BackgroundError (their
		// FlushEnd and CompactionEnd also carry benign errors such as
		// "pebble: empty table").
		ManifestCreated: func(info pebble.ManifestCreateInfo) {
			if info.Err != nil {
				h.noteIO("create", info.Path, info.Err)
				h.failWith("manifest", info.Err)
			}
		},
		WALCreated: func(info pebble.WALCreateInfo) {
			if info.Err != nil {
				h.noteIO("create", info.Path, info.Err)
				h.failWith("wal", info.Err)
			}
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			h.noteCorrupt(info.Path)
		},
	}
}

// opOf names the operation a Pebble error message is about.
func opOf(err error, otherwise string) string {
	msg := strings.ToLower(err.Error())
	for _, o := range [...]struct{ word, op string }{
		{"commit", "commit"}, {"manifest", "manifest update"}, {"flush", "flush"},
		{"compact", "compaction"}, {"ingest", "ingest"}, {"wal", "commit"},
	} {
		if strings.Contains(msg, o.word) {
			return o.op
		}
	}
	return otherwise
}

// fatalPanic carries a Fatalf to the recover of the call it happened in.
type fatalPanic struct{ err error }

// pebbleLogger passes Pebble's messages on and turns Fatalf into a fault.
type pebbleLogger struct {
	h    *health
	user pebble.Logger // nil: drop messages
}

func (l pebbleLogger) Infof(format string, args ...any) {
	if l.user != nil {
		l.user.Infof(format, args...)
	}
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	if l.user != nil {
		l.user.Errorf(format, args...)
	}
}

// Fatalf records the fault and ends the calling goroutine without letting
// a panic escape the store: see the comment at the top of this file.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	err := fmt.Errorf(format, args...)
	if l.user != nil {
		l.user.Errorf("fatal: %s", oneLine(err))
	}
	f := l.h.failWith(opOf(err, "fatal error"), err)
	if underCall() {
		panic(fatalPanic{f})
	}
	runtime.Goexit()
}

// thisPackage prefixes the function names of this package's code
// ("github.com/neardup/neardup/store.").
var thisPackage = reflect.TypeFor[health]().PkgPath() + "."

// underCall reports whether the current goroutine is running one of this
// package's calls (which all recover fatalPanic), rather than being one
// of Pebble's background goroutines.
func underCall() bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		fr, more := frames.Next()
		if strings.HasPrefix(fr.Function, thisPackage) && !strings.HasPrefix(fr.Function, thisPackage+"pebbleLogger") &&
			!strings.Contains(fr.Function, "faultFS") && !strings.Contains(fr.Function, "faultFile") && !strings.Contains(fr.Function, "health") {
			return true
		}
		if !more {
			return false
		}
	}
}

// recoverFault turns a panic in Pebble under a call of this package into
// the store's fault, stored in *errp. Use it deferred in every method that
// calls into Pebble: defer s.h.recoverFault("op", &err).
func (h *health) recoverFault(op string, errp *error) {
	r := recover()
	if r == nil {
		return
	}
	if fp, ok := r.(fatalPanic); ok {
		*errp = fp.err
		return
	}
	err, ok := r.(error)
	if !ok {
		err = fmt.Errorf("%v", r)
	}
	*errp = h.failWith(op, fmt.Errorf("pebble panicked: %w", err))
}

// faultFS wraps the filesystem a Pebble store runs on: it records the
// last I/O error and its file, and holds writes on a failed store (see
// the top of this file).
type faultFS struct {
	vfs.FS
	h *health
}

func (fs *faultFS) Unwrap() vfs.FS { return fs.FS }

func (fs *faultFS) Remove(name string) error {
	fs.h.hold()
	return fs.FS.Remove(name)
}

func (fs *faultFS) RemoveAll(name string) error {
	fs.h.hold()
	return fs.FS.RemoveAll(name)
}

func (fs *faultFS) OpenDir(name string) (vfs.File, error) {
	fs.h.hold()
	return fs.FS.OpenDir(name)
}

func (fs *faultFS) List(dir string) ([]string, error) {
	fs.h.hold()
	return fs.FS.List(dir)
}

func (fs *faultFS) Stat(name string) (vfs.FileInfo, error) {
	fs.h.hold()
	return fs.FS.Stat(name)
}

func (fs *faultFS) note(op, path string, err error) error {
	if err != nil && !os.IsNotExist(err) && !os.IsExist(err) && fs.own(path) {
		fs.h.noteIO(op, path, err)
	}
	return err
}

func (fs *faultFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, fs.note("open", name, err)
	}
	return &faultFile{File: f, fs: fs, name: name, log: fs.isLog(name)}, nil
}

// own reports whether name is in the store's directory (or below it: a
// bulk's tables). Pebble also writes elsewhere: a checkpoint's copies
// (Checkpoint), whose failures are the backup's, not the store's, so they
// are not recorded as the store's last I/O error.
func (fs *faultFS) own(name string) bool {
	rel, err := filepath.Rel(fs.h.dir, name)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// isLog reports whether name is one of the store's write-ahead logs,
// which lie in its directory itself (a checkpoint's copies of them are
// not: their failures are the backup's).
func (fs *faultFS) isLog(name string) bool {
	return strings.HasSuffix(name, ".log") && filepath.Dir(name) == filepath.Clean(fs.h.dir)
}

// logFault records a failed write to a write-ahead log as the store's
// fault and parks the calling goroutine for good (see the top of this
// file). It returns only if err is nil.
func (fs *faultFS) logFault(op, name string, err error) {
	if err == nil {
		return
	}
	fs.h.noteIO(op, name, err)
	fs.h.failWith("write-ahead log", err)
	fs.h.parkedOnce.Do(func() { close(fs.h.parked) })
	select {} // parked: Pebble must never see this error
}

func (fs *faultFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	fs.h.hold()
	fs.h.backoff()
	f, err := fs.FS.Create(name, category)
	if fs.isLog(name) {
		fs.logFault("create", name, err)
	}
	return fs.wrap(name, f, err)
}

func (fs *faultFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	fs.h.hold()
	f, err := fs.FS.Open(name, opts...)
	return fs.wrap(name, f, err)
}

func (fs *faultFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	fs.h.hold()
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, f, err)
}

func (fs *faultFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	fs.h.hold()
	fs.h.backoff()
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if fs.isLog(newname) {
		fs.logFault("create", newname, err)
	}
	return fs.wrap(newname, f, err)
}

func (fs *faultFS) Link(oldname, newname string) error {
	fs.h.hold()
	return fs.note("link", newname, fs.FS.Link(oldname, newname))
}

func (fs *faultFS) Rename(oldname, newname string) error {
	fs.h.hold()
	return fs.note("rename", newname, fs.FS.Rename(oldname, newname))
}

func (fs *faultFS) MkdirAll(dir string, perm os.FileMode) error {
	fs.h.hold()
	return fs.note("mkdir", dir, fs.FS.MkdirAll(dir, perm))
}

func (fs *faultFS) Lock(name string) (io.Closer, error) {
	fs.h.hold()
	c, err := fs.FS.Lock(name)
	return c, fs.note("lock", name, err)
}

// faultFile records the errors of one file's writes and syncs.
type faultFile struct {
	vfs.File
	fs   *faultFS
	name string
	log  bool // a write-ahead log
}

// written passes on the error of a write or sync, unless the file is a log.
func (f *faultFile) written(op string, err error) error {
	if f.log {
		f.fs.logFault(op, f.name, err)
	}
	return f.fs.note(op, f.name, err)
}

func (f *faultFile) Write(p []byte) (int, error) {
	f.fs.h.hold()
	n, err := f.File.Write(p)
	return n, f.written("write", err)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.h.hold()
	n, err := f.File.WriteAt(p, off)
	return n, f.written("write", err)
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.h.hold()
	n, err := f.File.ReadAt(p, off)
	if err == io.EOF {
		return n, err
	}
	return n, f.fs.note("read", f.name, err)
}

// Preallocate does nothing. Pebble preallocates each write-ahead log by
// 110% of MemTableBytes (70 MiB at the default), which is most of the
// disk a small store takes (issue 13: 217 MB for a 1 MB corpus); the log
// then grows as it is written. See footprint_test.go.
func (f *faultFile) Preallocate(offset, length int64) error { return nil }

func (f *faultFile) Read(p []byte) (int, error) {
	f.fs.h.hold()
	return f.File.Read(p)
}

func (f *faultFile) Sync() error {
	f.fs.h.hold()
	return f.written("sync", f.File.Sync())
}

func (f *faultFile) SyncData() error {
	f.fs.h.hold()
	return f.written("sync", f.File.SyncData())
}

func (f *faultFile) SyncTo(length int64) (bool, error) {
	f.fs.h.hold()
	full, err := f.File.SyncTo(length)
	return full, f.written("sync", err)
}
