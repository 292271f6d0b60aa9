//go:build !purego

#include "textflag.h"

// func prefetch(fs []feature.Feature)
//
// PREFETCHT0 of every 64-byte line of fs (SSE, in every amd64 CPU).
TEXT ·prefetch(SB), NOSPLIT, $0-24
	MOVQ fs_base+0(FP), AX
	MOVQ fs_len+8(FP), CX
	SHLQ $4, CX // 16 bytes per feature.Feature
	JZ   done

loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	SUBQ $64, CX
	JG   loop

done:
	RET
