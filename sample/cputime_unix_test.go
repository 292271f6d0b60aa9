//go:build unix

package sample

import "syscall"

// cpuNanos returns the process's user+system CPU time in nanoseconds. The
// benchmarks report docs per CPU-second beside wall-clock docs/s because the
// machine is shared: wall time there measures the neighbours as much as us.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
