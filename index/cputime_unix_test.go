//go:build unix

package index

import "syscall"

// processCPU returns the CPU time (user + system) of the process so far,
// in nanoseconds, or -1.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
