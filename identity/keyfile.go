package identity

import (
	"os"
	"path/filepath"
)

// WriteKeyFile writes k to path as 64 hex digits and a newline (what
// ParseKey reads), readable by its owner only. The key is written and
// synced beside path, then moved into place whole, so a reader never sees
// part of a key. With replace false, a file already at path is left alone
// and the error matches os.ErrExist: processes that race to create one key
// file end up with one key. With replace true it is replaced.
func WriteKeyFile(path string, k Key, replace bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after Link, or after a failure; gone after Rename
	_, err = f.WriteString(k.String() + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		return os.Rename(f.Name(), path)
	}
	return os.Link(f.Name(), path)
}
