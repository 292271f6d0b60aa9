//go:build amd64 && !purego

package rabin

import "golang.org/x/sys/cpu"

// hasCLMUL says whether the CPU has the carry-less multiplication (and the
// SSE4.1 extraction) that extendCL uses.
var hasCLMUL = cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE41

// extendCL returns Extend(f, data) for len(data) a multiple of 64, at
// least 64 (clmul_amd64.s).
//
//go:noescape
func extendCL(f uint64, data []byte, c *clFold) uint64
