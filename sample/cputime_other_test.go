//go:build !unix

package sample

// cpuNanos is not available here; the cpu-docs/s metric is then omitted.
func cpuNanos() int64 { return 0 }
