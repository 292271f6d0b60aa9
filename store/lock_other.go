//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import (
	"io"
	"os"
	"strconv"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// fileLock is the platform's exclusive file lock as Pebble takes it
// (LockFileEx on Windows), which also refuses a second lock from the same
// process. The owner's pid goes to a separate file beside the lock, since
// a locked file may not be readable by others here.
type fileLock struct{ c io.Closer }

func lockFile(path string) (*fileLock, error) {
	c, err := vfs.Default.Lock(path)
	if err != nil {
		return nil, &heldError{pid: readPid(path + ".owner")}
	}
	_ = os.WriteFile(path+".owner", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	return &fileLock{c: c}, nil
}

func (l *fileLock) unlock() error {
	if l.c == nil {
		return nil
	}
	err := l.c.Close()
	l.c = nil
	return err
}
