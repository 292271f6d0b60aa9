//go:build !purego

package sample

import "github.com/neardup/neardup/feature"

// prefetch asks the CPU to bring every cache line of fs into L1
// (PREFETCHT0, prefetch_amd64.s) without waiting for them. It does not
// read fs in the Go sense: it has no effect on the program's results.
//
//go:noescape
func prefetch(fs []feature.Feature)
