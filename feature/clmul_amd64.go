//go:build amd64

package feature

import "golang.org/x/sys/cpu"

// hasCLMUL says whether the CPU has the carry-less multiplication (and the
// SSE4.1 extraction) that clToks and clWindow use.
var hasCLMUL = cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE41

// clWords is clWordsGo with PCLMULQDQ (clmul_amd64.s). st and en have
// len(dst) elements; buf has 8 readable bytes before its first
// (asciiPath.load).
//
//go:noescape
func clWords(dst []uint64, buf []byte, st, en []int32, c *clConsts) int

// clWindow is clWindowGo with PCLMULQDQ (clmul_amd64.s). toks has
// len(dst)+K-1 elements.
//
//go:noescape
func clWindow(dst, toks []uint64, c *clConsts)
