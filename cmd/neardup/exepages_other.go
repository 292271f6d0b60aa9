//go:build !linux

package main

// trimExecutable is a no-op where the executable's pages are not dropped
// (see exepages_linux.go).
func trimExecutable(budget int64) (stop func()) { return func() {} }
