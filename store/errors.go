package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
)

// Errors returned by stores.
var (
	// ErrClosed is returned by operations on a closed store or batch.
	ErrClosed = errors.New("store: closed")
	// ErrFormat is returned when a directory holds a store of another format.
	ErrFormat = errors.New("store: incompatible format")
	// ErrCorrupt marks a value that does not decode, or a store file whose
	// checksum or structure is wrong. Errors that wrap it name the file
	// and suggest `neardup index check --store DIR`.
	ErrCorrupt = errors.New("store: corrupt")
	// ErrNotStore is returned when a directory is neither empty nor a
	// neardup store: it is never written to.
	ErrNotStore = errors.New("store: not a neardup store")
	// ErrInUse is returned when a store (or a directory locked with
	// LockDir) is held by another neardup process, or already by this one.
	ErrInUse = errors.New("store: in use")
	// ErrFailed marks the error of a store that met a storage fault (a
	// full disk, an I/O error, a failed sync, an internal failure of the
	// storage engine): the operation that met it and every later one
	// return it, promptly, until the store is closed. What was committed
	// before the fault is still there when the store is reopened once the
	// cause is gone.
	ErrFailed = errors.New("store: failed")
	// ErrJournalTrimmed is returned by Journaled.AckJournal to a follower
	// that was silent past the expiry: the entries it had not read may be
	// gone.
	ErrJournalTrimmed = errors.New("store: journal trimmed past the follower's position")
)

// FaultError is a storage fault of a store: what failed (Op, File), where
// (Dir), and why (Err). Its message is one line, cause first: "no space
// left on device: OUT/index (commit, file 000004.log)". It wraps Err, so
// errors.Is(err, syscall.ENOSPC) holds for a full disk, and it matches
// ErrFailed, and ErrCorrupt when the fault is a corrupt file.
type FaultError struct {
	Dir  string // the store's directory
	Op   string // what the store was doing: open, commit, flush, compaction, read, ingest, close...
	File string // the file concerned, if known (base name)
	Err  error  // the cause
	// Corrupt reports that a file failed its checksum or does not parse.
	Corrupt bool
}

func (e *FaultError) Error() string {
	var b strings.Builder
	if e.Corrupt {
		b.WriteString("corrupt store file ")
		if e.File != "" {
			b.WriteString(filepath.Join(e.Dir, e.File))
		} else {
			b.WriteString("in " + e.Dir)
		}
		fmt.Fprintf(&b, " (%s: %s); run `neardup index check --store %s`", e.Op, oneLine(e.Err), e.Dir)
		return b.String()
	}
	b.WriteString(cause(e.Err))
	b.WriteString(": ")
	b.WriteString(e.Dir)
	b.WriteString(" (")
	b.WriteString(e.Op)
	if e.File != "" {
		b.WriteString(", file ")
		b.WriteString(e.File)
	}
	b.WriteString(")")
	return b.String()
}

func (e *FaultError) Unwrap() error { return e.Err }

// Is reports whether e matches ErrFailed, or ErrCorrupt for a corrupt
// file.
func (e *FaultError) Is(target error) bool {
	return target == ErrFailed || (e.Corrupt && target == ErrCorrupt)
}

// cause returns the shortest honest description of err: the system
// error's text when there is one ("no space left on device"), the error's
// own text otherwise, on one line.
func cause(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return oneLine(err)
}

// oneLine returns err's message with line breaks folded, so that every
// fault is reported on one line (Pebble's messages may span several).
func oneLine(err error) string {
	if err == nil {
		return "unknown error"
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	// Pebble joins a marker of its own to corruption errors.
	msg = strings.ReplaceAll(msg, " <corruption detail carrier>", "")
	const max = 300
	if len(msg) > max {
		msg = msg[:max] + "..."
	}
	return msg
}
