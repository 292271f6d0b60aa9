package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Names of the files that mark and lock neardup directories.
const (
	// storeLockName is the lock of a Pebble store directory, holding the
	// pid of the process that has it open.
	storeLockName = "neardup.pid"
	// dirLockName is the lock LockDir takes in an output directory.
	dirLockName = ".neardup.lock"
)

// LockDir takes the exclusive lock of directory dir (creating dir if it
// does not exist) for this process, and returns the function that releases
// it. It is what a command that owns an output directory calls first,
// before it removes or rewrites anything inside: "take the lock first, then
// clean". A second LockDir on the same directory, from another process or
// from this one, fails at once with an error wrapping ErrInUse: "directory
// OUT is in use by another neardup process (pid 4242)".
//
// The lock is an advisory lock (flock) on the file DIR/.neardup.lock,
// which holds the owner's pid for that message. The operating system drops
// it when the process exits, so a kill -9 never leaves a directory locked;
// the file itself stays and is harmless. A store inside the directory (say
// OUT/index) has its own lock, taken by OpenPebble, so the caller may hold
// both.
func LockDir(dir string) (unlock func() error, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", dir, err)
	}
	l, err := lockFile(filepath.Join(dir, dirLockName))
	if err != nil {
		return nil, inUse("directory", dir, err)
	}
	return l.unlock, nil
}

// inUse turns a failure to lock into the error users see: the directory,
// and the pid of its owner when the lock file names one.
func inUse(what, dir string, err error) error {
	var held *heldError
	if !errors.As(err, &held) {
		return fmt.Errorf("store: lock %s: %w", dir, err)
	}
	switch {
	case held.pid == os.Getpid():
		return fmt.Errorf("%w: %s %s is in use by this process (pid %d): it is already open", ErrInUse, what, dir, held.pid)
	case held.pid > 0:
		return fmt.Errorf("%w: %s %s is in use by another neardup process (pid %d)", ErrInUse, what, dir, held.pid)
	default:
		return fmt.Errorf("%w: %s %s is in use by another neardup process", ErrInUse, what, dir)
	}
}

// heldError reports a lock held by someone else: pid is the owner's, or 0
// when the lock file does not say.
type heldError struct{ pid int }

func (e *heldError) Error() string { return fmt.Sprintf("locked by pid %d", e.pid) }

// readPid returns the pid recorded in a lock file, or 0.
func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
