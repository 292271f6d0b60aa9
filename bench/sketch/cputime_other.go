//go:build !linux

package main

import "time"

// threadCPU is unavailable here: timings fall back to wall-clock time.
func threadCPU() (time.Duration, bool) { return 0, false }
