//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// fileLock is an exclusive flock(2) lock on an open file. flock locks
// belong to the open file description, so a second open of the same file
// conflicts even within one process (unlike fcntl record locks, which a
// process shares with itself and loses when any of its descriptors of the
// file is closed).
type fileLock struct{ f *os.File }

// lockFile creates path if needed, locks it without waiting and writes
// this process's pid into it. A lock held by another owner is reported as
// a *heldError with the pid the file records.
func lockFile(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			// The owner writes its pid right after it locks: a
			// lock taken a moment ago may not show it yet.
			pid := readPid(path)
			for i := 0; pid == 0 && i < 20; i++ {
				time.Sleep(5 * time.Millisecond)
				pid = readPid(path)
			}
			return nil, &heldError{pid: pid}
		}
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, err
	}
	return &fileLock{f: f}, nil
}

// unlock releases the lock. The file stays (removing it would let a
// waiting opener lock a file that no longer has a name).
func (l *fileLock) unlock() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}
