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

// hasCL2 says whether the CPU also has the AVX forms that extendCL2 uses.
var hasCL2 = hasCLMUL && cpu.X86.HasAVX

// extendCL2 returns extendCL(f1, data, c1), extendCL(f2, data, c2) in one
// pass over data (clmul_amd64.s).
//
//go:noescape
func extendCL2(f1, f2 uint64, data []byte, c1, c2 *clFold) (uint64, uint64)

// hasCL2x says whether the CPU multiplies four pairs of words at once
// (AVX-512 VPCLMULQDQ), which extendCL2x uses.
var hasCL2x = hasCL2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPCLMULQDQ

// extendCL2x is extendCL2 for len(data) a multiple of 256, at least 256,
// four times as many lanes at once (clmul_amd64.s).
//
//go:noescape
func extendCL2x(f1, f2 uint64, data []byte, c1, c2 *clFold) (uint64, uint64)
