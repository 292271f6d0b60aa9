//go:build !linux

package main

import "os"

// peakRSS is unknown here (the units and presence of ru_maxrss vary by
// system): the tests that need it skip.
func peakRSS(ps *os.ProcessState) (int64, bool) { return 0, false }
