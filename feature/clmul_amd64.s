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
#define MASKS 2176
#define AM1 2448
#define ZP1 2464
#define FCASE 2480
#define FDLO 2496
#define FDHI 2512
#define FZERO 2528

// Each value is computed in one XMM register: the carry-less product of
// two reflected polynomials, read with one more degree (clmul.go), has
// the part of degree 64 and up in its low lane and the part below in its
// high lane, so h xor S_h is a lane-wise xor, Barrett's Q the low lane of
// h xor clmul(h, M), and the result the high lane of clmul(Q, Qc) xor
// (Q shifted to the high lane) xor S_l xor the constant (MOVHPD stores it).

// func clWords(dst []uint64, buf []byte, st, en []int32, c *clConsts) int
//
// Per word: its last 16 bytes (buf[end-8:end+8]; buf has 8 more readable
// bytes before it, asciiPath.load) masked to its length r (at most 16),
// case- and digit-folded bytewise, then hi·z1 (U), h = lo ^ U_h, and the
// result c1[r] ^ step1(h) ^ U_l.
TEXT ·clWords(SB), NOSPLIT, $0-112
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ buf_base+24(FP), SI
	MOVQ st_base+48(FP), R9
	MOVQ en_base+72(FP), R10
	MOVQ c+96(FP), R8
	MOVQ M1(R8), X11
	MOVQ Q1(R8), X12
	MOVQ Z1(R8), X13
	MOVOU AM1(R8), X5
	MOVOU ZP1(R8), X6
	MOVOU FCASE(R8), X7
	MOVOU FDLO(R8), X8
	MOVOU FDHI(R8), X9
	MOVOU FZERO(R8), X10
	XORQ R13, R13
	MOVQ $16, R11
	TESTQ CX, CX
	JZ tdone

tloop:
	MOVLQSX (R10), BX // end
	MOVLQSX (R9), DX  // start
	NEGQ DX
	ADDQ BX, DX       // r
	ORQ DX, R13
	CMPQ DX, R11
	CMOVQHI R11, DX   // min(r, 16)
	MOVOU -8(SI)(BX*1), X1
	MOVQ DX, AX
	SHLQ $4, AX
	MOVOU MASKS(R8)(AX*1), X2
	PAND X2, X1

	// Fold: upper-case letters get fcase, digits (if folded) become fzero.
	MOVOU X1, X2
	PCMPGTB X5, X2
	MOVOU X6, X3
	PCMPGTB X1, X3
	PAND X3, X2
	PAND X7, X2
	POR X2, X1
	MOVOU X1, X2
	PCMPGTB X8, X2
	MOVOU X9, X3
	PCMPGTB X1, X3
	PAND X3, X2
	MOVOU X1, X3
	PXOR X10, X3
	PAND X2, X3
	PXOR X3, X1

	// The low lane holds hi (the earlier bytes), the high lane lo.
	MOVOU X1, X2
	PCLMULQDQ $0x00, X13, X2 // U = hi·z1
	PSRLO $8, X1             // lo
	PXOR X1, X2              // low lane: h = lo ^ U_h; high lane: U_l
	MOVOU X2, X3
	PCLMULQDQ $0x00, X11, X3
	PXOR X2, X3              // low lane: Q
	MOVOU X3, X4
	PCLMULQDQ $0x00, X12, X4 // Q·Qc
	PSLLO $8, X3
	PXOR X3, X4
	PXOR X2, X4
	MOVHPD C1(R8)(DX*8), X0
	PXOR X0, X4
	MOVHPD X4, (DI)
	ADDQ $8, DI
	ADDQ $4, R9
	ADDQ $4, R10
	DECQ CX
	JNZ tloop

tdone:
	MOVQ R13, ret+104(FP)
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
