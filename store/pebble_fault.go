package store

// How a Pebble store turns storage faults into errors.
//
// Pebble treats some I/O failures as fatal: a failed write or sync of the
// write-ahead log or the MANIFEST calls Logger.Fatalf, and where it meets
// one while switching logs (rotateWAL) it panics with its mutex released,
// which ends in "fatal error: sync: unlock of unlocked mutex", a crash no
// recover can stop. A failed flush is retried at once and for ever, and a
// commit that needs a flush waits in a write stall that never ends, which
// also keeps Pebble's Close waiting. Here:
//
//   - health records the first fault; from then on every operation
//     returns it at once (ErrFailed). Operations already inside Pebble
//     are not waited for by their callers, but they do finish, and
//     Close waits for them and then for Pebble's own Close.
//   - The disk is frozen at the fault (pebble_freeze.go): from the first
//     fault on, faultFS changes nothing in the store's directory. Writes
//     to the logs and the MANIFEST are dropped and reported as done,
//     flush outputs and the other small files Pebble makes live in
//     memory, removals and renames only hide and move names in memory,
//     and compaction outputs (which could be as large as the store) fail
//     with the fault, which Pebble survives. So Pebble never meets an
//     error it cannot survive, its flushes finish (in memory) and it
//     closes normally, while the directory stays as it was at the fault:
//     what a crash at that moment would leave, which reopening handles (a
//     torn log tail at worst, recordcheck.go).
//   - Every write that Pebble reports done is checked against the fault
//     afterwards (Pebble.run): faultFS records the fault before it returns
//     to Pebble, so a commit whose log write or sync was dropped is
//     reported failed, never acknowledged.
//   - The event listener records background errors (flush, compaction,
//     ingestion, table stats) as faults, and corruption reports as the
//     file to name.
//   - The logger's Fatalf records the fault and then ends the goroutine
//     that called it without a panic escaping: under one of this
//     package's calls it panics with a value that the call's recover turns
//     into the error; on one of Pebble's background goroutines it calls
//     runtime.Goexit. With the disk frozen no I/O error reaches Pebble's
//     fatal paths; this is for what is left (an invariant Pebble checks).
//   - faultFS remembers the last I/O error and its file (Fatalf only gets
//     a formatted string), and once the store has failed makes Pebble's
//     retries of a failing compaction wait up to a second each (until
//     Close starts), so a failed store does not spin a core while the
//     process reports the error and exits.

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// health is the fault state of one store.
type health struct {
	dir    string
	fault  atomic.Pointer[FaultError]
	failed chan struct{} // closed when fault is set
	once   sync.Once

	closing     chan struct{} // closed when Close starts: no more waits in faultFS
	closingOnce sync.Once

	mu      sync.Mutex
	lastIO  ioFault // the last I/O error faultFS saw
	corrupt string  // the last file Pebble reported corrupt
}

type ioFault struct {
	op, file string
	err      error
}

func newHealth(dir string) *health {
	return &health{dir: dir, failed: make(chan struct{}), closing: make(chan struct{})}
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

// retryWait is how long faultFS holds each compaction output a failed
// store is asked to create, which turns Pebble's immediate retries of the
// failing compaction into one attempt a second.
const retryWait = time.Second

// backoff waits, on a failed store and until Close starts, before a
// compaction output is refused.
func (h *health) backoff() {
	if h.fault.Load() == nil {
		return
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
