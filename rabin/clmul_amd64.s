//go:build amd64 && !purego

#include "textflag.h"

// func extendCL(f uint64, data []byte, c *clFold) uint64
//
// Four lanes of 16 bytes fold by x^512 per 64 bytes; then into one by
// x^128; then S·x^64 mod p (clmul.go). Offsets in clFold: k512 0, k128
// 16, z 32, m 40, qc 48 (TestCLFoldLayout).
TEXT ·extendCL(SB), NOSPLIT, $0-48
	MOVQ f+0(FP), AX
	MOVQ data_base+8(FP), SI
	MOVQ data_len+16(FP), CX
	MOVQ c+32(FP), R8
	MOVOU 0(R8), X8
	MOVOU 16(R8), X9
	MOVQ 32(R8), X10
	MOVQ 40(R8), X11
	MOVQ 48(R8), X12
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVQ AX, X4
	PXOR X4, X0 // the first 8 bytes continue f
	ADDQ $64, SI
	SUBQ $64, CX
	JZ combine

loop:
	MOVOU X0, X4
	PCLMULQDQ $0x00, X8, X0
	PCLMULQDQ $0x11, X8, X4
	PXOR X4, X0
	MOVOU 0(SI), X4
	PXOR X4, X0
	MOVOU X1, X5
	PCLMULQDQ $0x00, X8, X1
	PCLMULQDQ $0x11, X8, X5
	PXOR X5, X1
	MOVOU 16(SI), X5
	PXOR X5, X1
	MOVOU X2, X6
	PCLMULQDQ $0x00, X8, X2
	PCLMULQDQ $0x11, X8, X6
	PXOR X6, X2
	MOVOU 32(SI), X6
	PXOR X6, X2
	MOVOU X3, X7
	PCLMULQDQ $0x00, X8, X3
	PCLMULQDQ $0x11, X8, X7
	PXOR X7, X3
	MOVOU 48(SI), X7
	PXOR X7, X3
	ADDQ $64, SI
	SUBQ $64, CX
	JNZ loop

combine:
	MOVOU X0, X4
	PCLMULQDQ $0x00, X9, X0
	PCLMULQDQ $0x11, X9, X4
	PXOR X4, X0
	PXOR X1, X0
	MOVOU X0, X4
	PCLMULQDQ $0x00, X9, X0
	PCLMULQDQ $0x11, X9, X4
	PXOR X4, X0
	PXOR X2, X0
	MOVOU X0, X4
	PCLMULQDQ $0x00, X9, X0
	PCLMULQDQ $0x11, X9, X4
	PXOR X4, X0
	PXOR X3, X0

	// S·x^64 = S_h·x^128 + S_l·x^64: U = S_h·z, h = S_l ^ U_h, then
	// Barrett, and U_l.
	MOVOU X0, X1
	PCLMULQDQ $0x00, X10, X1
	PSRLO $8, X0
	PXOR X0, X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PEXTRQ $1, X3, AX
	MOVQ AX, ret+40(FP)
	RET

// REDUCE(c) combines the lanes X0-X3 into one by x^128 and returns
// S·x^64 mod p in AX, as extendCL's combine does, with the constants of
// the clFold at c; it clobbers X0-X7 and X9-X11.
#define REDUCE(c) \
	MOVOU 16(c), X9 \
	MOVQ 32(c), X10 \
	MOVQ 40(c), X11 \
	MOVOU X0, X4 \
	PCLMULQDQ $0x00, X9, X0 \
	PCLMULQDQ $0x11, X9, X4 \
	PXOR X4, X0 \
	PXOR X1, X0 \
	MOVOU X0, X4 \
	PCLMULQDQ $0x00, X9, X0 \
	PCLMULQDQ $0x11, X9, X4 \
	PXOR X4, X0 \
	PXOR X2, X0 \
	MOVOU X0, X4 \
	PCLMULQDQ $0x00, X9, X0 \
	PCLMULQDQ $0x11, X9, X4 \
	PXOR X4, X0 \
	PXOR X3, X0 \
	MOVQ 48(c), X9 \
	MOVOU X0, X1 \
	PCLMULQDQ $0x00, X10, X1 \
	PSRLO $8, X0 \
	PXOR X0, X1 \
	MOVOU X1, X2 \
	PCLMULQDQ $0x00, X11, X2 \
	PXOR X1, X2 \
	MOVOU X2, X3 \
	PCLMULQDQ $0x00, X9, X3 \
	PSLLO $8, X2 \
	PXOR X2, X3 \
	PXOR X1, X3 \
	PEXTRQ $1, X3, AX

// func extendCL2(f1, f2 uint64, data []byte, c1, c2 *clFold) (uint64, uint64)
//
// extendCL under two polynomials in one pass over data: each 64-byte
// block is folded into two sets of four lanes (X0-X3 under c1, X4-X7
// under c2) with AVX's three-operand forms, which need no copy of a lane
// before it is multiplied, and take the data as a memory operand. The two sets then combine and reduce
// as extendCL's one does.
TEXT ·extendCL2(SB), NOSPLIT, $0-72
	MOVQ data_base+16(FP), SI
	MOVQ data_len+24(FP), CX
	MOVQ c1+40(FP), R8
	MOVQ c2+48(FP), R9
	MOVOU 0(R8), X8
	MOVOU 0(R9), X9
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVOU X0, X4
	MOVOU X1, X5
	MOVOU X2, X6
	MOVOU X3, X7
	MOVQ f1+0(FP), X10
	PXOR X10, X0 // the first 8 bytes continue f1
	MOVQ f2+8(FP), X11
	PXOR X11, X4 // and f2
	ADDQ $64, SI
	SUBQ $64, CX
	JZ combine2

loop2:
	VPCLMULQDQ $0x00, X8, X0, X10
	VPCLMULQDQ $0x11, X8, X0, X0
	VPCLMULQDQ $0x00, X9, X4, X11
	VPCLMULQDQ $0x11, X9, X4, X4
	VPXOR X10, X0, X0
	VPXOR X11, X4, X4
	VPXOR 0(SI), X0, X0
	VPXOR 0(SI), X4, X4
	VPCLMULQDQ $0x00, X8, X1, X12
	VPCLMULQDQ $0x11, X8, X1, X1
	VPCLMULQDQ $0x00, X9, X5, X13
	VPCLMULQDQ $0x11, X9, X5, X5
	VPXOR X12, X1, X1
	VPXOR X13, X5, X5
	VPXOR 16(SI), X1, X1
	VPXOR 16(SI), X5, X5
	VPCLMULQDQ $0x00, X8, X2, X10
	VPCLMULQDQ $0x11, X8, X2, X2
	VPCLMULQDQ $0x00, X9, X6, X11
	VPCLMULQDQ $0x11, X9, X6, X6
	VPXOR X10, X2, X2
	VPXOR X11, X6, X6
	VPXOR 32(SI), X2, X2
	VPXOR 32(SI), X6, X6
	VPCLMULQDQ $0x00, X8, X3, X12
	VPCLMULQDQ $0x11, X8, X3, X3
	VPCLMULQDQ $0x00, X9, X7, X13
	VPCLMULQDQ $0x11, X9, X7, X7
	VPXOR X12, X3, X3
	VPXOR X13, X7, X7
	VPXOR 48(SI), X3, X3
	VPXOR 48(SI), X7, X7
	ADDQ $64, SI
	SUBQ $64, CX
	JNZ loop2

combine2:
	// The second set waits in X12-X15 while the first reduces.
	MOVOU X4, X12
	MOVOU X5, X13
	MOVOU X6, X14
	MOVOU X7, X15
	REDUCE(R8)
	MOVQ AX, ret+56(FP)
	MOVOU X12, X0
	MOVOU X13, X1
	MOVOU X14, X2
	MOVOU X15, X3
	REDUCE(R9)
	MOVQ AX, ret1+64(FP)
	RET

// FOLD4(k, a, b, c, d) folds the four 64-byte accumulators a-d of one
// polynomial into a: a = a·x^512 + b, then + c, then + d (k: x^575,
// x^511 in each lane; Z10 a temporary).
#define FOLD4(k, a, b, c, d) \
	VPCLMULQDQ $0x00, k, a, Z10 \
	VPCLMULQDQ $0x11, k, a, a \
	VPTERNLOGQ $0x96, b, Z10, a \
	VPCLMULQDQ $0x00, k, a, Z10 \
	VPCLMULQDQ $0x11, k, a, a \
	VPTERNLOGQ $0x96, c, Z10, a \
	VPCLMULQDQ $0x00, k, a, Z10 \
	VPCLMULQDQ $0x11, k, a, a \
	VPTERNLOGQ $0x96, d, Z10, a

// STEP(k, a, t, in): a = a·x^2048 + in, per 16-byte lane (k: x^2111,
// x^2047 in each lane; t a temporary).
#define STEP(k, a, t, in) \
	VPCLMULQDQ $0x00, k, a, t \
	VPCLMULQDQ $0x11, k, a, a \
	VPTERNLOGQ $0x96, in, t, a

// func extendCL2x(f1, f2 uint64, data []byte, c1, c2 *clFold) (uint64, uint64)
//
// extendCL2 with AVX-512's carry-less multiplication of four 16-byte
// lanes at once (VPCLMULQDQ on ZMM registers), for len(data) a multiple
// of 256, at least 256: sixteen lanes per polynomial (Z0-Z3 under c1,
// Z4-Z7 under c2) step by x^2048 per 256 bytes, fold into four lanes by
// x^512, and reduce as extendCL does.
TEXT ·extendCL2x(SB), NOSPLIT, $0-72
	MOVQ data_base+16(FP), SI
	MOVQ data_len+24(FP), CX
	MOVQ c1+40(FP), R8
	MOVQ c2+48(FP), R9
	VBROADCASTI32X4 56(R8), Z8
	VBROADCASTI32X4 56(R9), Z9
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVDQA64 Z0, Z4
	VMOVDQA64 Z1, Z5
	VMOVDQA64 Z2, Z6
	VMOVDQA64 Z3, Z7
	VMOVQ f1+0(FP), X10
	VPXORQ Z10, Z0, Z0 // the first 8 bytes continue f1
	VMOVQ f2+8(FP), X11
	VPXORQ Z11, Z4, Z4 // and f2
	ADDQ $256, SI
	SUBQ $256, CX
	JZ combine2x

loop2x:
	VMOVDQU64 0(SI), Z20
	VMOVDQU64 64(SI), Z21
	VMOVDQU64 128(SI), Z22
	VMOVDQU64 192(SI), Z23
	STEP(Z8, Z0, Z10, Z20)
	STEP(Z9, Z4, Z11, Z20)
	STEP(Z8, Z1, Z12, Z21)
	STEP(Z9, Z5, Z13, Z21)
	STEP(Z8, Z2, Z14, Z22)
	STEP(Z9, Z6, Z15, Z22)
	STEP(Z8, Z3, Z16, Z23)
	STEP(Z9, Z7, Z17, Z23)
	ADDQ $256, SI
	SUBQ $256, CX
	JNZ loop2x

combine2x:
	VBROADCASTI32X4 0(R8), Z8
	VBROADCASTI32X4 0(R9), Z9
	FOLD4(Z8, Z0, Z1, Z2, Z3)
	FOLD4(Z9, Z4, Z5, Z6, Z7)
	VEXTRACTI32X4 $3, Z4, X15
	VEXTRACTI32X4 $2, Z4, X14
	VEXTRACTI32X4 $1, Z4, X13
	VMOVDQA X4, X12
	VEXTRACTI32X4 $3, Z0, X3
	VEXTRACTI32X4 $2, Z0, X2
	VEXTRACTI32X4 $1, Z0, X1
	VZEROUPPER
	REDUCE(R8)
	MOVQ AX, ret+56(FP)
	MOVOU X12, X0
	MOVOU X13, X1
	MOVOU X14, X2
	MOVOU X15, X3
	REDUCE(R9)
	MOVQ AX, ret1+64(FP)
	RET
