//go:build unix

package weighted

import "syscall"

// processCPU returns the CPU time (user + system) the process has used, in
// nanoseconds, or -1. On a machine shared with other work, CPU time per
// operation is a steadier measure than wall-clock time.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
