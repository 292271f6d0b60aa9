//go:build amd64

package feature

import "golang.org/x/sys/cpu"

// hasCLMUL says whether the CPU has the carry-less multiplication (and the
// SSE4.1 extraction) that clToks and clWindow use.
var hasCLMUL = cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE41

// clToks is clToksGo with PCLMULQDQ (clmul_amd64.s). All slices have
// len(dst) elements.
//
//go:noescape
func clToks(dst, lo, hi []uint64, r []uint8, c *clConsts)

// clWindow is clWindowGo with PCLMULQDQ (clmul_amd64.s). toks has
// len(dst)+K-1 elements.
//
//go:noescape
func clWindow(dst, toks []uint64, c *clConsts)
