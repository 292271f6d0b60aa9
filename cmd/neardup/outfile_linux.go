package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// createUnnamed opens an unnamed file (O_TMPFILE) in path's directory;
// commit(true) links it at path (replacing an existing file only with
// replace: through a temporary name and a rename), commit(false) drops it.
// Where the filesystem has no O_TMPFILE it falls back to createTemp.
func createUnnamed(path string, replace bool) (*os.File, func(ok bool) error, error) {
	dir := filepath.Dir(path)
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, outputMode)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
			return createTemp(path, replace)
		}
		return nil, nil, &os.PathError{Op: "create", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	commit := func(ok bool) error {
		defer f.Close()
		if !ok {
			return nil
		}
		proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
		if !replace {
			if err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW); err != nil {
				return &os.LinkError{Op: "link", Old: proc, New: path, Err: err}
			}
			return nil
		}
		tmp := filepath.Join(dir, ".neardup-"+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(int(f.Fd()))+".tmp")
		if err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW); err != nil {
			return &os.LinkError{Op: "link", Old: proc, New: tmp, Err: err}
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}
	return f, commit, nil
}

// umaskOnce reads the umask from /proc/self/status (setting and restoring
// it with umask(2) would race with files created meanwhile).
var umaskOnce = sync.OnceValue(func() os.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return os.FileMode(m)
				}
			}
		}
	}
	return 0o022
})

// umask returns the process's umask (read once, at first use).
func umask() os.FileMode { return umaskOnce() }

// freeBytes returns the space available to an unprivileged user on the
// filesystem of dir, or -1 when unknown.
func freeBytes(dir string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
