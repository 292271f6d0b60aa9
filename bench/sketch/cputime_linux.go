package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time consumed so far by the calling OS thread
// (clock_gettime CLOCK_THREAD_CPUTIME_ID, nanosecond resolution), so that
// time spent waiting for a CPU taken by other processes on a shared machine
// is not counted. The caller must hold its OS thread (runtime.LockOSThread).
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
