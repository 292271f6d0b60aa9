// The carry-less route of the ASCII path (clmul.go), hand-written; the
// window loop is unrolled for each K up to maxCLMULK.

//go:build amd64

#include "textflag.h"

// Offsets in clConsts (clmul.go; TestCLConstsLayout checks them).
#define M1 0
#define Q1 8
#define Z1 16
#define M2 24
#define Q2 32
#define CK 40
#define KK 48
#define C1 64
#define ZZ 2112

// Each value is computed in one XMM register: the carry-less product of
// two reflected polynomials, read with one more degree (clmul.go), has
// the part of degree 64 and up in its low lane and the part below in its
// high lane, so h xor S_h is a lane-wise xor, Barrett's Q the low lane of
// h xor clmul(h, M), and the result the high lane of clmul(Q, Qc) xor
// (Q shifted to the high lane) xor S_l xor the constant (MOVHPD stores it).

// func clToks(dst, lo, hi []uint64, r []uint8, c *clConsts)
TEXT ·clToks(SB), NOSPLIT, $0-104
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ lo_base+24(FP), SI
	MOVQ hi_base+48(FP), R9
	MOVQ r_base+72(FP), R10
	MOVQ c+96(FP), R8
	MOVQ M1(R8), X11
	MOVQ Q1(R8), X12
	MOVQ Z1(R8), X10
	TESTQ CX, CX
	JZ tdone

tloop:
	MOVQ (R9), X1
	PCLMULQDQ $0x00, X10, X1 // U = hi·z1
	MOVQ (SI), X2
	PXOR X2, X1              // low lane: h = lo ^ U_h; high lane: U_l
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2              // low lane: Q
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3 // Q·Qc
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	MOVBQZX (R10), DX
	MOVHPD C1(R8)(DX*8), X4
	PXOR X4, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	ADDQ $8, R9
	INCQ R10
	DECQ CX
	JNZ tloop

tdone:
	RET

// func clWindow(dst, toks []uint64, c *clConsts)
TEXT ·clWindow(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ toks_base+24(FP), SI
	MOVQ c+48(FP), R8
	MOVQ M2(R8), X11
	MOVQ Q2(R8), X12
	PXOR X13, X13
	MOVHPD CK(R8), X13
	MOVQ KK(R8), R9
	LEAQ -8(SI)(R9*8), SI // &toks[K-1]
	MOVQ ZZ+8(R8), X4
	MOVQ ZZ+16(R8), X5
	MOVQ ZZ+24(R8), X6
	MOVQ ZZ+32(R8), X7
	MOVQ ZZ+40(R8), X8
	MOVQ ZZ+48(R8), X9
	MOVQ ZZ+56(R8), X10
	TESTQ CX, CX
	JZ wdone
	CMPQ R9, $1
	JEQ wk1
	CMPQ R9, $2
	JEQ wk2
	CMPQ R9, $3
	JEQ wk3
	CMPQ R9, $4
	JEQ wk4
	CMPQ R9, $5
	JEQ wk5
	CMPQ R9, $6
	JEQ wk6
	CMPQ R9, $7
	JEQ wk7
	CMPQ R9, $8
	JEQ wk8
	JMP wdone

wk1:
	MOVQ (SI), X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PXOR X13, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	DECQ CX
	JNZ wk1
	RET

wk2:
	MOVQ (SI), X1
	MOVQ -8(SI), X2
	PCLMULQDQ $0x00, X4, X2
	PXOR X2, X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PXOR X13, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	DECQ CX
	JNZ wk2
	RET

wk3:
	MOVQ (SI), X1
	MOVQ -8(SI), X2
	PCLMULQDQ $0x00, X4, X2
	PXOR X2, X1
	MOVQ -16(SI), X2
	PCLMULQDQ $0x00, X5, X2
	PXOR X2, X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PXOR X13, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	DECQ CX
	JNZ wk3
	RET

wk4:
	MOVQ (SI), X1
	MOVQ -8(SI), X2
	PCLMULQDQ $0x00, X4, X2
	PXOR X2, X1
	MOVQ -16(SI), X2
	PCLMULQDQ $0x00, X5, X2
	PXOR X2, X1
	MOVQ -24(SI), X2
	PCLMULQDQ $0x00, X6, X2
	PXOR X2, X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PXOR X13, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	DECQ CX
	JNZ wk4
	RET

wk5:
	MOVQ (SI), X1
	MOVQ -8(SI), X2
	PCLMULQDQ $0x00, X4, X2
	PXOR X2, X1
	MOVQ -16(SI), X2
	PCLMULQDQ $0x00, X5, X2
	PXOR X2, X1
	MOVQ -24(SI), X2
	PCLMULQDQ $0x00, X6, X2
	PXOR X2, X1
	MOVQ -32(SI), X2
	PCLMULQDQ $0x00, X7, X2
	PXOR X2, X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PXOR X13, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	DECQ CX
	JNZ wk5
	RET

wk6:
	MOVQ (SI), X1
	MOVQ -8(SI), X2
	PCLMULQDQ $0x00, X4, X2
	PXOR X2, X1
	MOVQ -16(SI), X2
	PCLMULQDQ $0x00, X5, X2
	PXOR X2, X1
	MOVQ -24(SI), X2
	PCLMULQDQ $0x00, X6, X2
	PXOR X2, X1
	MOVQ -32(SI), X2
	PCLMULQDQ $0x00, X7, X2
	PXOR X2, X1
	MOVQ -40(SI), X2
	PCLMULQDQ $0x00, X8, X2
	PXOR X2, X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PXOR X13, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	DECQ CX
	JNZ wk6
	RET

wk7:
	MOVQ (SI), X1
	MOVQ -8(SI), X2
	PCLMULQDQ $0x00, X4, X2
	PXOR X2, X1
	MOVQ -16(SI), X2
	PCLMULQDQ $0x00, X5, X2
	PXOR X2, X1
	MOVQ -24(SI), X2
	PCLMULQDQ $0x00, X6, X2
	PXOR X2, X1
	MOVQ -32(SI), X2
	PCLMULQDQ $0x00, X7, X2
	PXOR X2, X1
	MOVQ -40(SI), X2
	PCLMULQDQ $0x00, X8, X2
	PXOR X2, X1
	MOVQ -48(SI), X2
	PCLMULQDQ $0x00, X9, X2
	PXOR X2, X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PXOR X13, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	DECQ CX
	JNZ wk7
	RET

wk8:
	MOVQ (SI), X1
	MOVQ -8(SI), X2
	PCLMULQDQ $0x00, X4, X2
	PXOR X2, X1
	MOVQ -16(SI), X2
	PCLMULQDQ $0x00, X5, X2
	PXOR X2, X1
	MOVQ -24(SI), X2
	PCLMULQDQ $0x00, X6, X2
	PXOR X2, X1
	MOVQ -32(SI), X2
	PCLMULQDQ $0x00, X7, X2
	PXOR X2, X1
	MOVQ -40(SI), X2
	PCLMULQDQ $0x00, X8, X2
	PXOR X2, X1
	MOVQ -48(SI), X2
	PCLMULQDQ $0x00, X9, X2
	PXOR X2, X1
	MOVQ -56(SI), X2
	PCLMULQDQ $0x00, X10, X2
	PXOR X2, X1
	MOVOU X1, X2
	PCLMULQDQ $0x00, X11, X2
	PXOR X1, X2
	MOVOU X2, X3
	PCLMULQDQ $0x00, X12, X3
	PSLLO $8, X2
	PXOR X2, X3
	PXOR X1, X3
	PXOR X13, X3
	MOVHPD X3, (DI)
	ADDQ $8, DI
	ADDQ $8, SI
	DECQ CX
	JNZ wk8
	RET

wdone:
	RET
