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
