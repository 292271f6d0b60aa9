// The carry-less route of the ASCII path (clmul.go), hand-written; the
// window loop is unrolled for each K up to maxCLMULK.

//go:build amd64 && !purego

#include "textflag.h"

// Offsets in clConsts (clmul.go; TestCLConstsLayout checks them).
#define M1 0
#define Q1 8
#define ZT1 16
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
#define LOMASK 2544
#define LEAD 2608
#define PERMHI 2880

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
	MOVQ ZT1(R8), X13
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

// func clWindow8(dst, toks []uint64, c *clConsts)
//
// clWindow for len(dst) a multiple of 8, eight shingles per step with
// AVX-512 (VPCLMULQDQ multiplies one quadword of each of the four 128-bit
// lanes): a 64-byte load of tokens holds the newest token of shingles
// 2L and 2L+1 in lane L, so immediate 0x00 computes the even shingles'
// products and 0x01 the odd ones'; the results come back together with
// one unpack of the high lanes.
TEXT ·clWindow8(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ toks_base+24(FP), SI
	MOVQ c+48(FP), R8
	VPBROADCASTQ M2(R8), Z23
	VPBROADCASTQ Q2(R8), Z24
	VPBROADCASTQ CK(R8), Z25
	VMOVDQU64 LOMASK(R8), Z26
	MOVQ KK(R8), R9
	LEAQ -8(SI)(R9*8), SI // &toks[K-1]
	VPBROADCASTQ ZZ+8(R8), Z16
	VPBROADCASTQ ZZ+16(R8), Z17
	VPBROADCASTQ ZZ+24(R8), Z18
	VPBROADCASTQ ZZ+32(R8), Z19
	VPBROADCASTQ ZZ+40(R8), Z20
	VPBROADCASTQ ZZ+48(R8), Z21
	VPBROADCASTQ ZZ+56(R8), Z22
	TESTQ CX, CX
	JZ w8done
	CMPQ R9, $1
	JEQ w8k1
	CMPQ R9, $2
	JEQ w8k2
	CMPQ R9, $3
	JEQ w8k3
	CMPQ R9, $4
	JEQ w8k4
	CMPQ R9, $5
	JEQ w8k5
	CMPQ R9, $6
	JEQ w8k6
	CMPQ R9, $7
	JEQ w8k7
	CMPQ R9, $8
	JEQ w8k8
	JMP w8done

w8k1:
	VMOVDQU64 (SI), Z0
	VPANDQ Z26, Z0, Z1
	VPSRLDQ $8, Z0, Z2
	VPCLMULQDQ $0x00, Z23, Z1, Z5
	VPXORQ Z1, Z5, Z5
	VPCLMULQDQ $0x00, Z24, Z5, Z6
	VPSLLDQ $8, Z5, Z5
	VPXORQ Z5, Z6, Z6
	VPXORQ Z1, Z6, Z6
	VPCLMULQDQ $0x00, Z23, Z2, Z7
	VPXORQ Z2, Z7, Z7
	VPCLMULQDQ $0x00, Z24, Z7, Z8
	VPSLLDQ $8, Z7, Z7
	VPXORQ Z7, Z8, Z8
	VPXORQ Z2, Z8, Z8
	VPUNPCKHQDQ Z8, Z6, Z9
	VPXORQ Z25, Z9, Z9
	VMOVDQU64 Z9, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ w8k1
	VZEROUPPER
	RET

w8k2:
	VMOVDQU64 (SI), Z0
	VPANDQ Z26, Z0, Z1
	VPSRLDQ $8, Z0, Z2
	VMOVDQU64 -8(SI), Z3
	VPCLMULQDQ $0x00, Z16, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z16, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VPCLMULQDQ $0x00, Z23, Z1, Z5
	VPXORQ Z1, Z5, Z5
	VPCLMULQDQ $0x00, Z24, Z5, Z6
	VPSLLDQ $8, Z5, Z5
	VPXORQ Z5, Z6, Z6
	VPXORQ Z1, Z6, Z6
	VPCLMULQDQ $0x00, Z23, Z2, Z7
	VPXORQ Z2, Z7, Z7
	VPCLMULQDQ $0x00, Z24, Z7, Z8
	VPSLLDQ $8, Z7, Z7
	VPXORQ Z7, Z8, Z8
	VPXORQ Z2, Z8, Z8
	VPUNPCKHQDQ Z8, Z6, Z9
	VPXORQ Z25, Z9, Z9
	VMOVDQU64 Z9, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ w8k2
	VZEROUPPER
	RET

w8k3:
	VMOVDQU64 (SI), Z0
	VPANDQ Z26, Z0, Z1
	VPSRLDQ $8, Z0, Z2
	VMOVDQU64 -8(SI), Z3
	VPCLMULQDQ $0x00, Z16, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z16, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -16(SI), Z3
	VPCLMULQDQ $0x00, Z17, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z17, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VPCLMULQDQ $0x00, Z23, Z1, Z5
	VPXORQ Z1, Z5, Z5
	VPCLMULQDQ $0x00, Z24, Z5, Z6
	VPSLLDQ $8, Z5, Z5
	VPXORQ Z5, Z6, Z6
	VPXORQ Z1, Z6, Z6
	VPCLMULQDQ $0x00, Z23, Z2, Z7
	VPXORQ Z2, Z7, Z7
	VPCLMULQDQ $0x00, Z24, Z7, Z8
	VPSLLDQ $8, Z7, Z7
	VPXORQ Z7, Z8, Z8
	VPXORQ Z2, Z8, Z8
	VPUNPCKHQDQ Z8, Z6, Z9
	VPXORQ Z25, Z9, Z9
	VMOVDQU64 Z9, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ w8k3
	VZEROUPPER
	RET

w8k4:
	VMOVDQU64 (SI), Z0
	VPANDQ Z26, Z0, Z1
	VPSRLDQ $8, Z0, Z2
	VMOVDQU64 -8(SI), Z3
	VPCLMULQDQ $0x00, Z16, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z16, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -16(SI), Z3
	VPCLMULQDQ $0x00, Z17, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z17, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -24(SI), Z3
	VPCLMULQDQ $0x00, Z18, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z18, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VPCLMULQDQ $0x00, Z23, Z1, Z5
	VPXORQ Z1, Z5, Z5
	VPCLMULQDQ $0x00, Z24, Z5, Z6
	VPSLLDQ $8, Z5, Z5
	VPXORQ Z5, Z6, Z6
	VPXORQ Z1, Z6, Z6
	VPCLMULQDQ $0x00, Z23, Z2, Z7
	VPXORQ Z2, Z7, Z7
	VPCLMULQDQ $0x00, Z24, Z7, Z8
	VPSLLDQ $8, Z7, Z7
	VPXORQ Z7, Z8, Z8
	VPXORQ Z2, Z8, Z8
	VPUNPCKHQDQ Z8, Z6, Z9
	VPXORQ Z25, Z9, Z9
	VMOVDQU64 Z9, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ w8k4
	VZEROUPPER
	RET

w8k5:
	VMOVDQU64 (SI), Z0
	VPANDQ Z26, Z0, Z1
	VPSRLDQ $8, Z0, Z2
	VMOVDQU64 -8(SI), Z3
	VPCLMULQDQ $0x00, Z16, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z16, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -16(SI), Z3
	VPCLMULQDQ $0x00, Z17, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z17, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -24(SI), Z3
	VPCLMULQDQ $0x00, Z18, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z18, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -32(SI), Z3
	VPCLMULQDQ $0x00, Z19, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z19, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VPCLMULQDQ $0x00, Z23, Z1, Z5
	VPXORQ Z1, Z5, Z5
	VPCLMULQDQ $0x00, Z24, Z5, Z6
	VPSLLDQ $8, Z5, Z5
	VPXORQ Z5, Z6, Z6
	VPXORQ Z1, Z6, Z6
	VPCLMULQDQ $0x00, Z23, Z2, Z7
	VPXORQ Z2, Z7, Z7
	VPCLMULQDQ $0x00, Z24, Z7, Z8
	VPSLLDQ $8, Z7, Z7
	VPXORQ Z7, Z8, Z8
	VPXORQ Z2, Z8, Z8
	VPUNPCKHQDQ Z8, Z6, Z9
	VPXORQ Z25, Z9, Z9
	VMOVDQU64 Z9, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ w8k5
	VZEROUPPER
	RET

w8k6:
	VMOVDQU64 (SI), Z0
	VPANDQ Z26, Z0, Z1
	VPSRLDQ $8, Z0, Z2
	VMOVDQU64 -8(SI), Z3
	VPCLMULQDQ $0x00, Z16, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z16, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -16(SI), Z3
	VPCLMULQDQ $0x00, Z17, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z17, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -24(SI), Z3
	VPCLMULQDQ $0x00, Z18, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z18, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -32(SI), Z3
	VPCLMULQDQ $0x00, Z19, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z19, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -40(SI), Z3
	VPCLMULQDQ $0x00, Z20, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z20, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VPCLMULQDQ $0x00, Z23, Z1, Z5
	VPXORQ Z1, Z5, Z5
	VPCLMULQDQ $0x00, Z24, Z5, Z6
	VPSLLDQ $8, Z5, Z5
	VPXORQ Z5, Z6, Z6
	VPXORQ Z1, Z6, Z6
	VPCLMULQDQ $0x00, Z23, Z2, Z7
	VPXORQ Z2, Z7, Z7
	VPCLMULQDQ $0x00, Z24, Z7, Z8
	VPSLLDQ $8, Z7, Z7
	VPXORQ Z7, Z8, Z8
	VPXORQ Z2, Z8, Z8
	VPUNPCKHQDQ Z8, Z6, Z9
	VPXORQ Z25, Z9, Z9
	VMOVDQU64 Z9, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ w8k6
	VZEROUPPER
	RET

w8k7:
	VMOVDQU64 (SI), Z0
	VPANDQ Z26, Z0, Z1
	VPSRLDQ $8, Z0, Z2
	VMOVDQU64 -8(SI), Z3
	VPCLMULQDQ $0x00, Z16, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z16, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -16(SI), Z3
	VPCLMULQDQ $0x00, Z17, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z17, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -24(SI), Z3
	VPCLMULQDQ $0x00, Z18, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z18, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -32(SI), Z3
	VPCLMULQDQ $0x00, Z19, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z19, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -40(SI), Z3
	VPCLMULQDQ $0x00, Z20, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z20, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -48(SI), Z3
	VPCLMULQDQ $0x00, Z21, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z21, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VPCLMULQDQ $0x00, Z23, Z1, Z5
	VPXORQ Z1, Z5, Z5
	VPCLMULQDQ $0x00, Z24, Z5, Z6
	VPSLLDQ $8, Z5, Z5
	VPXORQ Z5, Z6, Z6
	VPXORQ Z1, Z6, Z6
	VPCLMULQDQ $0x00, Z23, Z2, Z7
	VPXORQ Z2, Z7, Z7
	VPCLMULQDQ $0x00, Z24, Z7, Z8
	VPSLLDQ $8, Z7, Z7
	VPXORQ Z7, Z8, Z8
	VPXORQ Z2, Z8, Z8
	VPUNPCKHQDQ Z8, Z6, Z9
	VPXORQ Z25, Z9, Z9
	VMOVDQU64 Z9, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ w8k7
	VZEROUPPER
	RET

w8k8:
	VMOVDQU64 (SI), Z0
	VPANDQ Z26, Z0, Z1
	VPSRLDQ $8, Z0, Z2
	VMOVDQU64 -8(SI), Z3
	VPCLMULQDQ $0x00, Z16, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z16, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -16(SI), Z3
	VPCLMULQDQ $0x00, Z17, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z17, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -24(SI), Z3
	VPCLMULQDQ $0x00, Z18, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z18, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -32(SI), Z3
	VPCLMULQDQ $0x00, Z19, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z19, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -40(SI), Z3
	VPCLMULQDQ $0x00, Z20, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z20, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -48(SI), Z3
	VPCLMULQDQ $0x00, Z21, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z21, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VMOVDQU64 -56(SI), Z3
	VPCLMULQDQ $0x00, Z22, Z3, Z4
	VPXORQ Z4, Z1, Z1
	VPCLMULQDQ $0x01, Z22, Z3, Z4
	VPXORQ Z4, Z2, Z2
	VPCLMULQDQ $0x00, Z23, Z1, Z5
	VPXORQ Z1, Z5, Z5
	VPCLMULQDQ $0x00, Z24, Z5, Z6
	VPSLLDQ $8, Z5, Z5
	VPXORQ Z5, Z6, Z6
	VPXORQ Z1, Z6, Z6
	VPCLMULQDQ $0x00, Z23, Z2, Z7
	VPXORQ Z2, Z7, Z7
	VPCLMULQDQ $0x00, Z24, Z7, Z8
	VPSLLDQ $8, Z7, Z7
	VPXORQ Z7, Z8, Z8
	VPXORQ Z2, Z8, Z8
	VPUNPCKHQDQ Z8, Z6, Z9
	VPXORQ Z25, Z9, Z9
	VMOVDQU64 Z9, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ w8k8
	VZEROUPPER
	RET

w8done:
	VZEROUPPER
	RET

// func clWords4(dst []uint64, buf []byte, st, en []int32, c *clConsts) int
//
// clWords for len(dst) a multiple of 4, four words per step with AVX-512:
// each word's 16 bytes are masked and given the leading 1 of Hash
// (x^(8r), the top bit of the byte before the word; lead) in place of
// c1[r], so a word of 16 bytes is left to the caller; the four go to the
// lanes of one register, are folded with byte masks (0x80 is negative to
// the signed compares, so the leading 1 stays), and multiplied at once.
TEXT ·clWords4(SB), NOSPLIT, $0-112
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ buf_base+24(FP), SI
	MOVQ st_base+48(FP), R9
	MOVQ en_base+72(FP), R10
	MOVQ c+96(FP), R8
	VPBROADCASTQ M1(R8), Z11
	VPBROADCASTQ Q1(R8), Z12
	VPBROADCASTQ ZT1(R8), Z13
	VBROADCASTI32X4 AM1(R8), Z5
	VBROADCASTI32X4 ZP1(R8), Z6
	VBROADCASTI32X4 FCASE(R8), Z7
	VBROADCASTI32X4 FDLO(R8), Z8
	VBROADCASTI32X4 FDHI(R8), Z9
	VBROADCASTI32X4 FZERO(R8), Z10
	VMOVDQU64 PERMHI(R8), Z14
	XORQ R13, R13
	MOVQ $16, R11
	SHRQ $2, CX
	JZ w4done

w4loop:
	MOVLQSX 0(R10), BX
	MOVLQSX 0(R9), AX
	NEGQ AX
	ADDQ BX, AX
	ORQ AX, R13
	CMPQ AX, R11
	CMOVQHI R11, AX
	SHLQ $4, AX
	VMOVDQU -8(SI)(BX*1), X0
	VPAND MASKS(R8)(AX*1), X0, X0
	VPOR LEAD(R8)(AX*1), X0, X0
	MOVLQSX 4(R10), BX
	MOVLQSX 4(R9), AX
	NEGQ AX
	ADDQ BX, AX
	ORQ AX, R13
	CMPQ AX, R11
	CMOVQHI R11, AX
	SHLQ $4, AX
	VMOVDQU -8(SI)(BX*1), X1
	VPAND MASKS(R8)(AX*1), X1, X1
	VPOR LEAD(R8)(AX*1), X1, X1
	MOVLQSX 8(R10), BX
	MOVLQSX 8(R9), AX
	NEGQ AX
	ADDQ BX, AX
	ORQ AX, R13
	CMPQ AX, R11
	CMOVQHI R11, AX
	SHLQ $4, AX
	VMOVDQU -8(SI)(BX*1), X2
	VPAND MASKS(R8)(AX*1), X2, X2
	VPOR LEAD(R8)(AX*1), X2, X2
	MOVLQSX 12(R10), BX
	MOVLQSX 12(R9), AX
	NEGQ AX
	ADDQ BX, AX
	ORQ AX, R13
	CMPQ AX, R11
	CMOVQHI R11, AX
	SHLQ $4, AX
	VMOVDQU -8(SI)(BX*1), X3
	VPAND MASKS(R8)(AX*1), X3, X3
	VPOR LEAD(R8)(AX*1), X3, X3
	VINSERTI32X4 $1, X1, Z0, Z0
	VINSERTI32X4 $2, X2, Z0, Z0
	VINSERTI32X4 $3, X3, Z0, Z0

	// Fold.
	VPCMPGTB Z5, Z0, K1
	VPCMPGTB Z0, Z6, K1, K2
	VPADDB Z7, Z0, K2, Z0
	VPCMPGTB Z8, Z0, K3
	VPCMPGTB Z0, Z9, K3, K4
	VMOVDQU8 Z10, K4, Z0

	// Each lane: hi in the low quadword, lo in the high one.
	VPCLMULQDQ $0x00, Z13, Z0, Z1 // U = hi·z1
	VPSRLDQ $8, Z0, Z2
	VPXORQ Z2, Z1, Z1             // h = lo ^ U_h; U_l
	VPCLMULQDQ $0x00, Z11, Z1, Z2
	VPXORQ Z1, Z2, Z2             // Q
	VPCLMULQDQ $0x00, Z12, Z2, Z3
	VPSLLDQ $8, Z2, Z2
	VPXORQ Z2, Z3, Z3
	VPXORQ Z1, Z3, Z3             // high quadwords: the tokens
	VPERMQ Z3, Z14, Z4
	VMOVDQU Y4, (DI)
	ADDQ $32, DI
	ADDQ $16, R9
	ADDQ $16, R10
	DECQ CX
	JNZ w4loop

w4done:
	VZEROUPPER
	MOVQ R13, ret+104(FP)
	RET

// func wordMasks(dst []uint64, text []byte, digits uint64) bool
//
// dst[i] = the word-byte mask of text[64i:64i+64] (bit j for byte j: the
// bytes wordFlags marks: letters, '_', digits if digits != 0); reports
// whether the text holds a byte >= 0x80. len(text) = 64·len(dst) > 0.
TEXT ·wordMasks(SB), NOSPLIT, $0-57
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ text_base+24(FP), SI
	MOVQ digits+48(FP), AX
	XORQ R11, R11
	TESTQ AX, AX
	JZ nodigits
	MOVQ $-1, R11
nodigits:
	KMOVQ R11, K5
	MOVL $0x20, AX
	VPBROADCASTB AX, Z20
	MOVL $0x61, AX // 'a'
	VPBROADCASTB AX, Z21
	MOVL $26, AX
	VPBROADCASTB AX, Z22
	MOVL $0x30, AX // '0'
	VPBROADCASTB AX, Z23
	MOVL $10, AX
	VPBROADCASTB AX, Z24
	MOVL $0x5f, AX // '_'
	VPBROADCASTB AX, Z25
	XORQ R10, R10
	TESTQ CX, CX
	JZ mdone

mloop:
	VMOVDQU64 (SI), Z0
	VPMOVB2M Z0, K1
	KMOVQ K1, AX
	ORQ AX, R10
	VPORQ Z20, Z0, Z1
	VPSUBB Z21, Z1, Z1
	VPCMPUB $1, Z22, Z1, K2 // (x|0x20) - 'a' < 26
	VPSUBB Z23, Z0, Z2
	VPCMPUB $1, Z24, Z2, K5, K3 // x - '0' < 10, if digits
	VPCMPEQB Z25, Z0, K4
	KORQ K2, K3, K2
	KORQ K2, K4, K2
	KMOVQ K2, AX
	MOVQ AX, (DI)
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ mloop

mdone:
	VZEROUPPER
	TESTQ R10, R10
	SETNE ret+56(FP)
	RET

// Byte indices 0..63, for VPCOMPRESSB.
DATA bytesIdx<>+0(SB)/8, $0x0706050403020100
DATA bytesIdx<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA bytesIdx<>+16(SB)/8, $0x1716151413121110
DATA bytesIdx<>+24(SB)/8, $0x1f1e1d1c1b1a1918
DATA bytesIdx<>+32(SB)/8, $0x2726252423222120
DATA bytesIdx<>+40(SB)/8, $0x2f2e2d2c2b2a2928
DATA bytesIdx<>+48(SB)/8, $0x3736353433323130
DATA bytesIdx<>+56(SB)/8, $0x3f3e3d3c3b3a3938
GLOBL bytesIdx<>(SB), RODATA|NOPTR, $64

// func spans512(text []byte, st, en []int32, digits uint64) (nst, nen int, high bool)
//
// spans with AVX-512 (VBMI2): each 64-byte block's word-byte mask m as in
// wordMasks, its word starts m &^ (m<<1 | carry) and ends the reverse,
// and the offsets of each listed by VPCOMPRESSB of the byte indices,
// widened to 32 bits, 16 at a time. A block has at most 32 starts and 32
// ends; the stores run up to 31 entries past the count, which st and en
// must have room for. len(text) = 64·blocks > 0.
TEXT ·spans512(SB), NOSPLIT, $0-97
	MOVQ text_base+0(FP), SI
	MOVQ text_len+8(FP), CX
	SHRQ $6, CX
	MOVQ st_base+24(FP), R8
	MOVQ en_base+48(FP), R9
	MOVQ digits+72(FP), AX
	XORQ R11, R11
	TESTQ AX, AX
	JZ snodigits
	MOVQ $-1, R11
snodigits:
	KMOVQ R11, K5
	MOVL $0x20, AX
	VPBROADCASTB AX, Z20
	MOVL $0x61, AX
	VPBROADCASTB AX, Z21
	MOVL $26, AX
	VPBROADCASTB AX, Z22
	MOVL $0x30, AX
	VPBROADCASTB AX, Z23
	MOVL $10, AX
	VPBROADCASTB AX, Z24
	MOVL $0x5f, AX
	VPBROADCASTB AX, Z25
	VMOVDQU64 bytesIdx<>(SB), Z26
	VPXORD Z27, Z27, Z27 // block offset, in every dword
	MOVL $64, AX
	VPBROADCASTD AX, Z28
	XORQ R10, R10 // high
	XORQ R11, R11 // ends so far
	XORQ R12, R12 // carry
	XORQ R15, R15 // starts so far
	TESTQ CX, CX
	JZ sdone

sloop:
	VMOVDQU64 (SI), Z0
	VPMOVB2M Z0, K1
	KMOVQ K1, AX
	ORQ AX, R10
	VPORQ Z20, Z0, Z1
	VPSUBB Z21, Z1, Z1
	VPCMPUB $1, Z22, Z1, K2
	VPSUBB Z23, Z0, Z2
	VPCMPUB $1, Z24, Z2, K5, K3
	VPCMPEQB Z25, Z0, K4
	KORQ K2, K3, K2
	KORQ K2, K4, K2
	KMOVQ K2, AX  // m
	MOVQ AX, BX
	SHLQ $1, BX
	ORQ R12, BX   // m<<1 | carry
	MOVQ AX, R12
	SHRQ $63, R12
	MOVQ BX, DX
	NOTQ DX
	ANDQ AX, DX   // starts
	MOVQ AX, R13
	NOTQ R13
	ANDQ BX, R13  // ends

	KMOVQ DX, K6
	VPCOMPRESSB Z26, K6, Z7
	POPCNTQ DX, R14
	VPMOVZXBD X7, Z8
	VPADDD Z27, Z8, Z8
	VMOVDQU32 Z8, (R8)(R15*4)
	CMPQ R14, $16
	JLS sst
	VEXTRACTI32X4 $1, Z7, X9
	VPMOVZXBD X9, Z8
	VPADDD Z27, Z8, Z8
	VMOVDQU32 Z8, 64(R8)(R15*4)
sst:
	ADDQ R14, R15

	KMOVQ R13, K6
	VPCOMPRESSB Z26, K6, Z7
	POPCNTQ R13, R14
	VPMOVZXBD X7, Z8
	VPADDD Z27, Z8, Z8
	VMOVDQU32 Z8, (R9)(R11*4)
	CMPQ R14, $16
	JLS sen
	VEXTRACTI32X4 $1, Z7, X9
	VPMOVZXBD X9, Z8
	VPADDD Z27, Z8, Z8
	VMOVDQU32 Z8, 64(R9)(R11*4)
sen:
	ADDQ R14, R11

	VPADDD Z28, Z27, Z27
	ADDQ $64, SI
	DECQ CX
	JNZ sloop

sdone:
	VZEROUPPER
	MOVQ R15, nst+80(FP)
	MOVQ R11, nen+88(FP)
	TESTQ R10, R10
	SETNE high+96(FP)
	RET

// The AVX2 kernels, for CPUs with VPCLMULQDQ on 256-bit vectors but no
// AVX-512: the same steps as clWindow8 and clWords4 on two 128-bit lanes.

// func cpuid7ecx() uint32
TEXT ·cpuid7ecx(SB), NOSPLIT, $0-4
	MOVL $7, AX
	XORL CX, CX
	CPUID
	MOVL CX, ret+0(FP)
	RET

// W4TERM adds the products of the tokens i back (loaded from off(SI),
// off = -8i) by z[i] (zr): to the even shingles' sums (Y1, low
// quadwords) and the odd ones' (Y2).
#define W4TERM(off, zr) \
	VMOVDQU off(SI), Y3; \
	VPCLMULQDQ $0x00, zr, Y3, Y4; \
	VPXOR Y4, Y1, Y1; \
	VPCLMULQDQ $0x01, zr, Y3, Y4; \
	VPXOR Y4, Y2, Y2

// W4END reduces the sums, puts the four shingles together, stores them
// and loops to label lp.
#define W4END(lp) \
	VPCLMULQDQ $0x00, Y5, Y1, Y3; \
	VPXOR Y1, Y3, Y3; \
	VPCLMULQDQ $0x00, Y6, Y3, Y4; \
	VPSLLDQ $8, Y3, Y3; \
	VPXOR Y3, Y4, Y4; \
	VPXOR Y1, Y4, Y4; \
	VPCLMULQDQ $0x00, Y5, Y2, Y3; \
	VPXOR Y2, Y3, Y3; \
	VPCLMULQDQ $0x00, Y6, Y3, Y0; \
	VPSLLDQ $8, Y3, Y3; \
	VPXOR Y3, Y0, Y0; \
	VPXOR Y2, Y0, Y0; \
	VPUNPCKHQDQ Y0, Y4, Y1; \
	VPXOR Y7, Y1, Y1; \
	VMOVDQU Y1, (DI); \
	ADDQ $32, DI; \
	ADDQ $32, SI; \
	SUBQ $4, CX; \
	JNZ lp; \
	VZEROUPPER; \
	RET

// W4START loads the newest tokens of four shingles: the even ones' to the
// low quadwords of Y1, the odd ones' to those of Y2.
#define W4START \
	VMOVDQU (SI), Y0; \
	VPAND LOMASK(R8), Y0, Y1; \
	VPSRLDQ $8, Y0, Y2

// func clWindow4(dst, toks []uint64, c *clConsts)
//
// clWindow for len(dst) a multiple of 4, four shingles per step with AVX2
// and VPCLMULQDQ on 256-bit vectors (clWindow8's scheme on two lanes).
TEXT ·clWindow4(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ toks_base+24(FP), SI
	MOVQ c+48(FP), R8
	VPBROADCASTQ M2(R8), Y5
	VPBROADCASTQ Q2(R8), Y6
	VPBROADCASTQ CK(R8), Y7
	MOVQ KK(R8), R9
	LEAQ -8(SI)(R9*8), SI // &toks[K-1]
	VPBROADCASTQ ZZ+8(R8), Y9
	VPBROADCASTQ ZZ+16(R8), Y10
	VPBROADCASTQ ZZ+24(R8), Y11
	VPBROADCASTQ ZZ+32(R8), Y12
	VPBROADCASTQ ZZ+40(R8), Y13
	VPBROADCASTQ ZZ+48(R8), Y14
	VPBROADCASTQ ZZ+56(R8), Y15
	TESTQ CX, CX
	JZ w4wdone
	CMPQ R9, $1
	JEQ w4k1
	CMPQ R9, $2
	JEQ w4k2
	CMPQ R9, $3
	JEQ w4k3
	CMPQ R9, $4
	JEQ w4k4
	CMPQ R9, $5
	JEQ w4k5
	CMPQ R9, $6
	JEQ w4k6
	CMPQ R9, $7
	JEQ w4k7
	CMPQ R9, $8
	JEQ w4k8
	JMP w4wdone

w4k1:
	W4START
	W4END(w4k1)

w4k2:
	W4START
	W4TERM(-8, Y9)
	W4END(w4k2)

w4k3:
	W4START
	W4TERM(-8, Y9)
	W4TERM(-16, Y10)
	W4END(w4k3)

w4k4:
	W4START
	W4TERM(-8, Y9)
	W4TERM(-16, Y10)
	W4TERM(-24, Y11)
	W4END(w4k4)

w4k5:
	W4START
	W4TERM(-8, Y9)
	W4TERM(-16, Y10)
	W4TERM(-24, Y11)
	W4TERM(-32, Y12)
	W4END(w4k5)

w4k6:
	W4START
	W4TERM(-8, Y9)
	W4TERM(-16, Y10)
	W4TERM(-24, Y11)
	W4TERM(-32, Y12)
	W4TERM(-40, Y13)
	W4END(w4k6)

w4k7:
	W4START
	W4TERM(-8, Y9)
	W4TERM(-16, Y10)
	W4TERM(-24, Y11)
	W4TERM(-32, Y12)
	W4TERM(-40, Y13)
	W4TERM(-48, Y14)
	W4END(w4k7)

w4k8:
	W4START
	W4TERM(-8, Y9)
	W4TERM(-16, Y10)
	W4TERM(-24, Y11)
	W4TERM(-32, Y12)
	W4TERM(-40, Y13)
	W4TERM(-48, Y14)
	W4TERM(-56, Y15)
	W4END(w4k8)

w4wdone:
	VZEROUPPER
	RET

// W2LOAD loads word i's 16 bytes (at -8(SI)(end)), masked to its length
// r and with the leading 1 (lead), into xr, and ors r into R13. The
// tables are indexed by r mod 16: a word of 16 bytes or more gets garbage,
// which the caller replaces (offsets are nonnegative int32s).
#define W2LOAD(i, xr) \
	MOVL i(R10), BX; \
	MOVL BX, AX; \
	SUBL i(R9), AX; \
	ORQ AX, R13; \
	ANDL $15, AX; \
	SHLQ $4, AX; \
	VMOVDQU -8(SI)(BX*1), xr; \
	VPAND MASKS(R8)(AX*1), xr, xr; \
	VPOR LEAD(R8)(AX*1), xr, xr

// W2FOLD case- and digit-folds the bytes of yr (clWords' fold on two
// lanes; Y2 and Y3 are scratch).
#define W2FOLD(yr) \
	VPCMPGTB Y7, yr, Y2; \
	VPCMPGTB yr, Y8, Y3; \
	VPAND Y3, Y2, Y2; \
	VPAND Y9, Y2, Y2; \
	VPOR Y2, yr, yr; \
	VPCMPGTB Y10, yr, Y2; \
	VPCMPGTB yr, Y11, Y3; \
	VPAND Y3, Y2, Y2; \
	VPXOR Y12, yr, Y3; \
	VPAND Y2, Y3, Y3; \
	VPXOR Y3, yr, yr

// W2MUL turns each lane of yr (hi in the low quadword, lo in the high
// one) into the token in its high quadword (Y2 and Y3 are scratch).
#define W2MUL(yr) \
	VPCLMULQDQ $0x00, Y15, yr, Y2; \
	VPSRLDQ $8, yr, Y3; \
	VPXOR Y3, Y2, Y2; \
	VPCLMULQDQ $0x00, Y13, Y2, Y3; \
	VPXOR Y2, Y3, Y3; \
	VPCLMULQDQ $0x00, Y14, Y3, yr; \
	VPSLLDQ $8, Y3, Y3; \
	VPXOR Y3, yr, yr; \
	VPXOR Y2, yr, yr

// func clWords4x2(dst []uint64, buf []byte, st, en []int32, c *clConsts) int
//
// clWords4 with AVX2 and VPCLMULQDQ on 256-bit vectors: four words per
// step in two registers, words 0 and 2 in one, 1 and 3 in the other, so
// that one unpack of the high quadwords puts the tokens in order. Words of
// 16 bytes or more are left to the caller, as with clWords4.
TEXT ·clWords4x2(SB), NOSPLIT, $0-112
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ buf_base+24(FP), SI
	MOVQ st_base+48(FP), R9
	MOVQ en_base+72(FP), R10
	MOVQ c+96(FP), R8
	VBROADCASTI128 AM1(R8), Y7
	VBROADCASTI128 ZP1(R8), Y8
	VBROADCASTI128 FCASE(R8), Y9
	VBROADCASTI128 FDLO(R8), Y10
	VBROADCASTI128 FDHI(R8), Y11
	VBROADCASTI128 FZERO(R8), Y12
	VPBROADCASTQ M1(R8), Y13
	VPBROADCASTQ Q1(R8), Y14
	VPBROADCASTQ ZT1(R8), Y15
	XORQ R13, R13
	SHRQ $2, CX
	JZ w42done

w42loop:
	W2LOAD(0, X0)
	W2LOAD(4, X1)
	W2LOAD(8, X4)
	W2LOAD(12, X5)
	VINSERTI128 $1, X4, Y0, Y0
	VINSERTI128 $1, X5, Y1, Y1
	W2FOLD(Y0)
	W2FOLD(Y1)
	W2MUL(Y0)
	W2MUL(Y1)
	VPUNPCKHQDQ Y1, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, DI
	ADDQ $16, R9
	ADDQ $16, R10
	DECQ CX
	JNZ w42loop

w42done:
	VZEROUPPER
	MOVQ R13, ret+104(FP)
	RET

// func clWords4x2F(dst []uint64, buf []byte, st, en []int32, c *clConsts) int
//
// clWords4x2 for text that spans256 has folded already: the same loop
// without W2FOLD.
TEXT ·clWords4x2F(SB), NOSPLIT, $0-112
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ buf_base+24(FP), SI
	MOVQ st_base+48(FP), R9
	MOVQ en_base+72(FP), R10
	MOVQ c+96(FP), R8
	VPBROADCASTQ M1(R8), Y13
	VPBROADCASTQ Q1(R8), Y14
	VPBROADCASTQ ZT1(R8), Y15
	XORQ R13, R13
	SHRQ $2, CX
	JZ w4fdone

w4floop:
	W2LOAD(0, X0)
	W2LOAD(4, X1)
	W2LOAD(8, X4)
	W2LOAD(12, X5)
	VINSERTI128 $1, X4, Y0, Y0
	VINSERTI128 $1, X5, Y1, Y1
	W2MUL(Y0)
	W2MUL(Y1)
	VPUNPCKHQDQ Y1, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, DI
	ADDQ $16, R9
	ADDQ $16, R10
	DECQ CX
	JNZ w4floop

w4fdone:
	VZEROUPPER
	MOVQ R13, ret+104(FP)
	RET

// SPOUT1 writes the offset of reg's lowest set bit, plus the block offset
// R12, at off(DX), and clears the bit (tzcnt of 0 is 64).
#define SPOUT1(reg, off) \
	TZCNTQ reg, AX; \
	ADDL R12, AX; \
	MOVL AX, off(DX); \
	BLSRQ reg, reg

// SPOUT writes the offsets of the set bits of reg (destroyed), plus the
// block offset R12, from DX on: twelve at once (a 64-byte block of prose
// seldom has more starts, and the round has no branch on the text), then
// four at a time until none is left; up to 12 past the last. lp and dn are
// fresh labels.
#define SPOUT(reg, lp, dn) \
	SPOUT1(reg, 0); \
	SPOUT1(reg, 4); \
	SPOUT1(reg, 8); \
	SPOUT1(reg, 12); \
	SPOUT1(reg, 16); \
	SPOUT1(reg, 20); \
	SPOUT1(reg, 24); \
	SPOUT1(reg, 28); \
	SPOUT1(reg, 32); \
	SPOUT1(reg, 36); \
	SPOUT1(reg, 40); \
	SPOUT1(reg, 44); \
	SPOUT1(reg, 48); \
	SPOUT1(reg, 52); \
	SPOUT1(reg, 56); \
	SPOUT1(reg, 60); \
	TESTQ reg, reg; \
	JZ dn; \
	ADDQ $64, DX; \
lp: \
	SPOUT1(reg, 0); \
	SPOUT1(reg, 4); \
	SPOUT1(reg, 8); \
	SPOUT1(reg, 12); \
	ADDQ $16, DX; \
	TESTQ reg, reg; \
	JNZ lp; \
dn:

// S2HALF classifies the 32 bytes of yr (loaded from off(SI)): it folds
// them (letters or'ed with Y5, word digits and'ed with the complement of
// Y6), stores them back, and leaves their word-byte mask in reg.
#define S2HALF(yr, off, reg) \
	VPOR Y8, yr, Y2; \
	VPCMPGTB Y9, Y2, Y3; \
	VPCMPGTB Y2, Y10, Y2; \
	VPAND Y2, Y3, Y3; \
	VPCMPGTB Y11, yr, Y2; \
	VPCMPGTB yr, Y12, Y4; \
	VPAND Y4, Y2, Y2; \
	VPAND Y15, Y2, Y2; \
	VPOR Y2, Y3, Y4; \
	VPAND Y5, Y3, Y3; \
	VPOR yr, Y3, Y3; \
	VPAND Y6, Y2, Y2; \
	VPANDN Y3, Y2, Y3; \
	VMOVDQU Y3, off(SI); \
	VPCMPEQB Y13, yr, Y2; \
	VPOR Y2, Y4, Y3; \
	VPMOVMSKB Y3, reg

// func spans256(text []byte, st, en []int32, digits, fold uint64) (nst, nen int, high bool)
//
// spans512 with AVX2 and BMI: each 64-byte block's word-byte mask from
// byte compares of its two halves (VPMOVMSKB), its starts and ends as in
// spans512, and their offsets listed by TZCNT and BLSR (SPOUT). The
// stores run up to 16 entries past the count, which st and en must
// have room for. len(text) = 64·blocks > 0. On the way it folds the text
// in place (foldASCII): letters get the byte fold&0xff or'ed in, word
// digits lose the bits of the byte fold>>8 ('0'..'9' to '0' for 0x0f).
TEXT ·spans256(SB), NOSPLIT, $0-105
	MOVQ text_base+0(FP), SI
	MOVQ text_len+8(FP), CX
	SHRQ $6, CX
	MOVQ st_base+24(FP), R8
	MOVQ en_base+48(FP), R9
	MOVQ fold+80(FP), AX
	VMOVQ AX, X5
	VPBROADCASTB X5, Y5 // or'ed into letters
	SHRQ $8, AX
	VMOVQ AX, X6
	VPBROADCASTB X6, Y6 // cleared in word digits
	MOVQ digits+72(FP), AX
	XORQ R11, R11
	TESTQ AX, AX
	JZ s2nodigits
	MOVQ $-1, R11
s2nodigits:
	VMOVQ R11, X15
	VPBROADCASTB X15, Y15 // 0xff in every byte if digits are word bytes
	MOVL $0x20, AX
	VMOVQ AX, X8
	VPBROADCASTB X8, Y8
	MOVL $0x60, AX // 'a'-1
	VMOVQ AX, X9
	VPBROADCASTB X9, Y9
	MOVL $0x7b, AX // 'z'+1
	VMOVQ AX, X10
	VPBROADCASTB X10, Y10
	MOVL $0x2f, AX // '0'-1
	VMOVQ AX, X11
	VPBROADCASTB X11, Y11
	MOVL $0x3a, AX // '9'+1
	VMOVQ AX, X12
	VPBROADCASTB X12, Y12
	MOVL $0x5f, AX // '_'
	VMOVQ AX, X13
	VPBROADCASTB X13, Y13
	VPXOR Y14, Y14, Y14 // the or of all bytes (high)
	XORQ R12, R12 // block offset
	XORQ R14, R14 // carry
	XORQ R15, R15 // starts so far
	XORQ R10, R10 // ends so far
	TESTQ CX, CX
	JZ s2done

s2loop:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VPOR Y0, Y14, Y14
	VPOR Y1, Y14, Y14
	// Letters (signed compares: bytes >= 0x80 are flagged as high),
	// digits if they are word bytes, and '_'.
	S2HALF(Y0, 0, AX)
	S2HALF(Y1, 32, BX)
	SHLQ $32, BX
	ORQ BX, AX    // m
	LEAQ (R14)(AX*2), BX // m<<1 | carry
	MOVQ AX, R14
	SHRQ $63, R14
	ANDNQ AX, BX, R13 // starts: m &^ prev
	ANDNQ BX, AX, BX  // ends: prev &^ m
	POPCNTQ R13, DI
	LEAQ (R8)(R15*4), DX
	ADDQ DI, R15
	SPOUT(R13, s2st, s2std)
	POPCNTQ BX, DI
	LEAQ (R9)(R10*4), DX
	ADDQ DI, R10
	SPOUT(BX, s2en, s2end)
	ADDQ $64, R12
	ADDQ $64, SI
	DECQ CX
	JNZ s2loop

s2done:
	VPMOVMSKB Y14, AX
	VZEROUPPER
	MOVQ R15, nst+88(FP)
	MOVQ R10, nen+96(FP)
	TESTL AX, AX
	SETNE high+104(FP)
	RET

// func dedupSet4(keys []uint64, db []Feature, fb []int32, ids []uint64, shift uint) int
//
// dedupSet4Go with AVX2: the id is compared with the four slots of its
// bucket at once, and goes to the first free one (TZCNT of the free
// slots' mask); the only branches on the data are for a repeated id, a
// full bucket and id 0.
TEXT ·dedupSet4(SB), NOSPLIT, $0-112
	MOVQ keys_base+0(FP), R8
	MOVQ keys_len+8(FP), R9
	SHLQ $3, R9
	DECQ R9 // byte mask of the table; buckets are 32-byte aligned
	MOVQ db_base+24(FP), DI
	MOVQ fb_base+48(FP), R10
	MOVQ ids_base+72(FP), SI
	MOVQ ids_len+80(FP), CX
	MOVQ shift+96(FP), R11
	MOVQ $0x9e3779b97f4a7c15, R12
	VPXOR Y15, Y15, Y15
	MOVQ $0x3ff0000000000000, DX // 1.0
	VMOVQ DX, X14
	VPSLLDQ $8, X14, X14 // (0, 1.0): a Feature's weight in the high quadword
	XORQ R13, R13 // features so far
	XORQ R14, R14 // i
	XORQ BX, BX   // id 0 seen
	TESTQ CX, CX
	JZ ddone

dloop:
	MOVQ (SI)(R14*8), AX
	TESTQ AX, AX
	JZ dzero
	VPBROADCASTQ (SI)(R14*8), Y0
	MOVQ AX, DX
	IMULQ R12, DX
	SHRXQ R11, DX, DX
	SHLQ $5, DX // the bucket's byte offset

dprobe:
	VMOVDQU (R8)(DX*1), Y1
	VPCMPEQQ Y0, Y1, Y2
	VMOVMSKPD Y2, R15
	TESTL R15, R15
	JNZ dnext // a repeat
	VPCMPEQQ Y15, Y1, Y2
	VMOVMSKPD Y2, R15
	TZCNTL R15, R15 // CF set if no slot is free
	JCS dfull
	LEAQ (DX)(R15*8), R15
	MOVQ AX, (R8)(R15*1)

demit:
	VPBLENDD $0x0c, X14, X0, X3 // Feature{ID: id, Weight: 1}
	VMOVDQU X3, (DI)
	ADDQ $16, DI
	MOVL R14, (R10)(R13*4)
	INCQ R13

dnext:
	INCQ R14
	CMPQ R14, CX
	JLT dloop

ddone:
	VZEROUPPER
	MOVQ R13, ret+104(FP)
	RET

dfull:
	ADDQ $32, DX
	ANDQ R9, DX
	JMP dprobe

dzero:
	TESTQ BX, BX
	JNZ dnext
	MOVQ $1, BX
	VPXOR X0, X0, X0 // the id 0, for demit
	JMP demit
