//go:build !linux

package main

import "os"

// createUnnamed is createTemp where there is no O_TMPFILE.
func createUnnamed(path string, replace bool) (*os.File, func(ok bool) error, error) {
	return createTemp(path, replace)
}

// umask returns the usual umask (the process's is not read here).
func umask() os.FileMode { return 0o022 }

// freeBytes returns -1: the free space is not known here.
func freeBytes(dir string) int64 { return -1 }
