#include "textflag.h"

// ZERO4 clears the accumulators a, b, c and d.
#define ZERO4(a, b, c, d) \
	VXORPS a, a, a; \
	VXORPS b, b, b; \
	VXORPS c, c, c; \
	VXORPS d, d, d

// FMA4 adds to the accumulators a, b, c and d the products of Y4, Y5, Y6
// and Y7 with the 32 floats at p, 8 floats each.
#define FMA4(p, a, b, c, d) \
	VFMADD231PS (p), Y4, a; \
	VFMADD231PS 32(p), Y5, b; \
	VFMADD231PS 64(p), Y6, c; \
	VFMADD231PS 96(p), Y7, d

// WIDEN4 loads the 32 bytes at p into Y4-Y7 as 32 float32s (zero-extended,
// then converted).
#define WIDEN4(p) \
	VPMOVZXBD (p), Y4; \
	VPMOVZXBD 8(p), Y5; \
	VPMOVZXBD 16(p), Y6; \
	VPMOVZXBD 24(p), Y7; \
	VCVTDQ2PS Y4, Y4; \
	VCVTDQ2PS Y5, Y5; \
	VCVTDQ2PS Y6, Y6; \
	VCVTDQ2PS Y7, Y7

// HSUM4 leaves the sum of all lanes of the accumulators a, b, c and d in the
// low float of xa, the low half of a; xb, the low half of b, is clobbered.
#define HSUM4(a, b, c, d, xa, xb) \
	VADDPS b, a, a; \
	VADDPS d, c, c; \
	VADDPS c, a, a; \
	VEXTRACTF128 $1, a, xb; \
	VADDPS xb, xa, xa; \
	VHADDPS xa, xa, xa; \
	VHADDPS xa, xa, xa

// func dotAVX2(a, b *float32, n int) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	ZERO4(Y0, Y1, Y2, Y3)

loop32:
	CMPQ CX, $32
	JL   loop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	FMA4(DI, Y0, Y1, Y2, Y3)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32

loop8:
	CMPQ CX, $8
	JL   reduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

reduce:
	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dot4AVX2(q, m *float32, n, stride, groups int, out *float32)
TEXT ·dot4AVX2(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ m+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), DX
	MOVQ groups+32(FP), BX
	MOVQ out+40(FP), R12
	SHLQ $2, DX

group:
	TESTQ BX, BX
	JZ    done
	MOVQ  DI, R8
	LEAQ  (DI)(DX*1), R9
	LEAQ  (DI)(DX*2), R10
	LEAQ  (R9)(DX*2), R11
	MOVQ  SI, AX
	MOVQ  CX, R13
	ZERO4(Y0, Y1, Y2, Y3)
	ZERO4(Y4, Y5, Y6, Y7)

loop16:
	CMPQ R13, $16
	JL   tail8
	VMOVUPS (AX), Y8
	VMOVUPS 32(AX), Y9
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS 32(R8), Y9, Y4
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS 32(R9), Y9, Y5
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS 32(R10), Y9, Y6
	VFMADD231PS (R11), Y8, Y3
	VFMADD231PS 32(R11), Y9, Y7
	ADDQ $64, AX
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	SUBQ $16, R13
	JMP  loop16

tail8:
	CMPQ R13, $8
	JL   reduce4
	VMOVUPS (AX), Y8
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3

reduce4:
	VADDPS  Y4, Y0, Y0
	VADDPS  Y5, Y1, Y1
	VADDPS  Y6, Y2, Y2
	VADDPS  Y7, Y3, Y3
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS  X1, X0, X0
	VMOVUPS X0, (R12)
	ADDQ    $16, R12
	LEAQ    (DI)(DX*4), DI
	DECQ    BX
	JMP     group

done:
	VZEROUPPER
	RET

// func dotU8AVX2(w *float32, c *uint8, n int) float32
// The inner product of n floats at w with n bytes at c (zero-extended and
// converted to float32); n is a multiple of 8.
TEXT ·dotU8AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	ZERO4(Y0, Y1, Y2, Y3)

u8loop32:
	CMPQ CX, $32
	JL   u8loop8
	WIDEN4(DI)
	FMA4(SI, Y0, Y1, Y2, Y3)
	ADDQ $128, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  u8loop32

u8loop8:
	CMPQ CX, $8
	JL   u8reduce
	VPMOVZXBD (DI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS (SI), Y4, Y0
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  u8loop8

u8reduce:
	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotU8x2AVX2(w1, w2 *float32, c *uint8, n int, out *float32)
// dotU8AVX2 for two weight vectors over the same bytes: each 8 bytes are
// converted once; out[0] and out[1] get exactly what dotU8AVX2 returns
// for w1 and w2 (same accumulators, same reduction order).
TEXT ·dotU8x2AVX2(SB), NOSPLIT, $0-40
	MOVQ w1+0(FP), SI
	MOVQ w2+8(FP), R8
	MOVQ c+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX
	ZERO4(Y0, Y1, Y2, Y3)
	ZERO4(Y8, Y9, Y10, Y11)

u8x2loop32:
	CMPQ CX, $32
	JL   u8x2loop8
	WIDEN4(DI)
	FMA4(SI, Y0, Y1, Y2, Y3)
	FMA4(R8, Y8, Y9, Y10, Y11)
	ADDQ $128, SI
	ADDQ $128, R8
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  u8x2loop32

u8x2loop8:
	CMPQ CX, $8
	JL   u8x2reduce
	VPMOVZXBD (DI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS (SI), Y4, Y0
	VFMADD231PS (R8), Y4, Y8
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  u8x2loop8

u8x2reduce:
	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	MOVSS X0, (DX)
	HSUM4(Y8, Y9, Y10, Y11, X8, X9)
	MOVSS X8, 4(DX)
	VZEROUPPER
	RET
