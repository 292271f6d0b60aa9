//go:build amd64 && !purego

package feature

import "golang.org/x/sys/cpu"

// hasCLMUL says whether the CPU has the carry-less multiplication (and the
// SSE4.1 extraction) that clToks and clWindow use.
var hasCLMUL = cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE41

// hasCLMUL512 says whether it also has AVX-512's carry-less
// multiplication of 512-bit vectors, which clWindow8 uses.
var hasCLMUL512 = hasCLMUL && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VPCLMULQDQ

// hasSpans512 says whether spans512's VPCOMPRESSB (AVX512-VBMI2) is there
// too.
var hasSpans512 = hasCLMUL512 && cpu.X86.HasAVX512VBMI2 && cpu.X86.HasPOPCNT

// hasCLMUL256 says whether the CPU has VPCLMULQDQ on 256-bit vectors
// (CPUID.7.0:ECX bit 10; x/sys/cpu reports it only with AVX-512) and
// AVX2, which clWindow4 and clWords4x2 use.
var hasCLMUL256 = hasCLMUL && cpu.X86.HasAVX2 && cpuid7ecx()&(1<<10) != 0

// hasSpans256 says whether spans256's AVX2, BMI1 (TZCNT, BLSR, ANDN) and
// POPCNT are there.
var hasSpans256 = hasCLMUL && cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasPOPCNT

// cpuid7ecx returns ECX of CPUID leaf 7, subleaf 0 (clmul_amd64.s).
func cpuid7ecx() uint32

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

// clWindow8 is clWindow for len(dst) a multiple of 8, with AVX-512
// (clmul_amd64.s).
//
//go:noescape
func clWindow8(dst, toks []uint64, c *clConsts)

// clWords4 is clWords for len(dst) a multiple of 4 and words of less than
// 16 bytes, with AVX-512 (clmul_amd64.s).
//
//go:noescape
func clWords4(dst []uint64, buf []byte, st, en []int32, c *clConsts) int

// wordMasks is wordMasksGo with AVX-512 (clmul_amd64.s).
//
//go:noescape
func wordMasks(dst []uint64, text []byte, digits uint64) bool

// spans512 lists word starts and ends with AVX-512 (clmul_amd64.s); st and
// en need room for 32 entries past the words. It reports whether the text
// holds a byte >= 0x80 (st and en are then garbage).
//
//go:noescape
func spans512(text []byte, st, en []int32, digits uint64) (nst, nen int, high bool)

// clWindow4 is clWindow for len(dst) a multiple of 4, with AVX2 and
// VPCLMULQDQ on 256-bit vectors (clmul_amd64.s).
//
//go:noescape
func clWindow4(dst, toks []uint64, c *clConsts)

// clWords4x2 is clWords4 with AVX2 and VPCLMULQDQ on 256-bit vectors
// (clmul_amd64.s).
//
//go:noescape
func clWords4x2(dst []uint64, buf []byte, st, en []int32, c *clConsts) int

// spans256 is spans512 with AVX2 and BMI1 (clmul_amd64.s); st and en need
// room for 16 entries past the words. It also folds the text in place as
// foldASCII(text, fold) does, so that clWords4x2F needs not.
//
//go:noescape
func spans256(text []byte, st, en []int32, digits, fold uint64) (nst, nen int, high bool)

// clWords4x2F is clWords4x2 for text that spans256 has folded
// (clmul_amd64.s).
//
//go:noescape
func clWords4x2F(dst []uint64, buf []byte, st, en []int32, c *clConsts) int

// hasDedup4 says whether the CPU has dedupSet4's AVX2, BMI1 and BMI2;
// useDedup4 whether dedupSet takes it: where the AVX-512 kernels run,
// dedupSet stays as it was measured with them.
var (
	hasDedup4 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasBMI2
	useDedup4 = hasDedup4 && !hasCLMUL512
)

// dedupSet4 is dedupSet4Go with AVX2 (clmul_amd64.s); len(db) and len(fb)
// are at least len(ids).
//
//go:noescape
func dedupSet4(keys []uint64, db []Feature, fb []int32, ids []uint64, shift uint) int
