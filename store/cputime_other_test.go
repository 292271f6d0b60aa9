//go:build !unix

package store_test

// processCPU returns -1: CPU time is not measured on this platform.
func processCPU() int64 { return -1 }
