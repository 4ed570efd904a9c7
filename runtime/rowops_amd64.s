//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA kernels for rowops.go. Called only when useAVX2 is set.
//
// Every result is computed by the same correctly rounded operations, in the
// same order, as the pure-Go reference in rowops.go, so the results are
// bit-identical (NaN payloads aside; see vec.go). As in vec_amd64.s,
// math.FMA(x, y, z) is VFMADD231 with z the destination, x the second
// source and y the third, and the reductions keep DotFMA's sixteen lanes in
// Y0..Y3 (acc[0..3], acc[4..7], acc[8..11], acc[12..15]).
//
// Register use: only AX, CX, DX, SI, DI, R8 and X0-X7/Y0-Y7 (these are ABI0
// functions; Go code calling one re-zeroes X15 when it returns).

// func mulAddFMAAVX2(dst, x, y []float64)
//
// dst[i] = fma(x[i], y[i], dst[i]) for i < len(dst).
TEXT ·mulAddFMAAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ y_base+48(FP), R8
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX

muladd_loop16:
	CMPQ        AX, DX
	JGE         muladd_tail4
	VMOVUPD     (DI)(AX*8), Y0
	VMOVUPD     32(DI)(AX*8), Y1
	VMOVUPD     64(DI)(AX*8), Y2
	VMOVUPD     96(DI)(AX*8), Y3
	VMOVUPD     (SI)(AX*8), Y4
	VMOVUPD     32(SI)(AX*8), Y5
	VMOVUPD     64(SI)(AX*8), Y6
	VMOVUPD     96(SI)(AX*8), Y7
	VFMADD231PD (R8)(AX*8), Y4, Y0
	VFMADD231PD 32(R8)(AX*8), Y5, Y1
	VFMADD231PD 64(R8)(AX*8), Y6, Y2
	VFMADD231PD 96(R8)(AX*8), Y7, Y3
	VMOVUPD     Y0, (DI)(AX*8)
	VMOVUPD     Y1, 32(DI)(AX*8)
	VMOVUPD     Y2, 64(DI)(AX*8)
	VMOVUPD     Y3, 96(DI)(AX*8)
	ADDQ        $16, AX
	JMP         muladd_loop16

muladd_tail4:
	MOVQ CX, DX
	ANDQ $-4, DX

muladd_loop4:
	CMPQ        AX, DX
	JGE         muladd_tail2
	VMOVUPD     (DI)(AX*8), Y0
	VMOVUPD     (SI)(AX*8), Y4
	VFMADD231PD (R8)(AX*8), Y4, Y0
	VMOVUPD     Y0, (DI)(AX*8)
	ADDQ        $4, AX
	JMP         muladd_loop4

	// len&3 elements remain: two, then one.
muladd_tail2:
	TESTQ       $2, CX
	JZ          muladd_tail1
	VMOVUPD     (DI)(AX*8), X0
	VMOVUPD     (SI)(AX*8), X4
	VFMADD231PD (R8)(AX*8), X4, X0
	VMOVUPD     X0, (DI)(AX*8)
	ADDQ        $2, AX

muladd_tail1:
	TESTQ       $1, CX
	JZ          muladd_done
	VMOVSD      (DI)(AX*8), X0
	VMOVSD      (SI)(AX*8), X4
	VFMADD231SD (R8)(AX*8), X4, X0
	VMOVSD      X0, (DI)(AX*8)

muladd_done:
	VZEROUPPER
	RET

// func scaleVecAVX2(x []float64, a float64)
//
// x[i] = x[i] * a for i < len(x).
TEXT ·scaleVecAVX2(SB), NOSPLIT, $0-32
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSD a+24(FP), Y0
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-16, DX

scale_loop16:
	CMPQ    AX, DX
	JGE     scale_tail4
	VMULPD  (SI)(AX*8), Y0, Y1
	VMULPD  32(SI)(AX*8), Y0, Y2
	VMULPD  64(SI)(AX*8), Y0, Y3
	VMULPD  96(SI)(AX*8), Y0, Y4
	VMOVUPD Y1, (SI)(AX*8)
	VMOVUPD Y2, 32(SI)(AX*8)
	VMOVUPD Y3, 64(SI)(AX*8)
	VMOVUPD Y4, 96(SI)(AX*8)
	ADDQ    $16, AX
	JMP     scale_loop16

scale_tail4:
	MOVQ CX, DX
	ANDQ $-4, DX

scale_loop4:
	CMPQ    AX, DX
	JGE     scale_tail2
	VMULPD  (SI)(AX*8), Y0, Y1
	VMOVUPD Y1, (SI)(AX*8)
	ADDQ    $4, AX
	JMP     scale_loop4

scale_tail2:
	TESTQ   $2, CX
	JZ      scale_tail1
	VMULPD  (SI)(AX*8), X0, X1
	VMOVUPD X1, (SI)(AX*8)
	ADDQ    $2, AX

scale_tail1:
	TESTQ  $1, CX
	JZ     scale_done
	VMULSD (SI)(AX*8), X0, X1
	VMOVSD X1, (SI)(AX*8)

scale_done:
	VZEROUPPER
	RET

// REDUCE16 sums the sixteen lanes Y0..Y3 into X0 in DotFMA's order:
// t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j]), then
// s = (t0 + t2) + (t1 + t3). Always all of them, even when some lanes are
// known to be +0, so that signed zeros come out as in the reference.
#define REDUCE16 \
	VADDPD       Y1, Y0, Y0; \
	VADDPD       Y3, Y2, Y2; \
	VADDPD       Y2, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPD       X1, X0, X0; \
	VPERMILPD    $1, X0, X1; \
	VADDSD       X1, X0, X0

// func sumVecAVX2(x []float64) float64
//
// The order documented at SumVec.
TEXT ·sumVecAVX2(SB), NOSPLIT, $0-32
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-16, DX

sum_loop16:
	CMPQ   AX, DX
	JGE    sum_tail4
	VADDPD (SI)(AX*8), Y0, Y0
	VADDPD 32(SI)(AX*8), Y1, Y1
	VADDPD 64(SI)(AX*8), Y2, Y2
	VADDPD 96(SI)(AX*8), Y3, Y3
	ADDQ   $16, AX
	JMP    sum_loop16

sum_tail4:
	MOVQ CX, DX
	ANDQ $-4, DX

sum_loop4:
	CMPQ   AX, DX
	JGE    sum_reduce
	VADDPD (SI)(AX*8), Y0, Y0
	ADDQ   $4, AX
	JMP    sum_loop4

sum_reduce:
	REDUCE16

sum_tail1:
	CMPQ   AX, CX
	JGE    sum_done
	VADDSD (SI)(AX*8), X0, X0
	INCQ   AX
	JMP    sum_tail1

sum_done:
	VMOVSD X0, ret+24(FP)
	VZEROUPPER
	RET

// func sqDistAVX2(x, y []float64) float64
//
// The order documented at SqDist: d = x[i] - y[i], acc = fma(d, d, acc).
TEXT ·sqDistAVX2(SB), NOSPLIT, $0-56
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-16, DX

sqd_loop16:
	CMPQ        AX, DX
	JGE         sqd_tail4
	VMOVUPD     (SI)(AX*8), Y4
	VMOVUPD     32(SI)(AX*8), Y5
	VMOVUPD     64(SI)(AX*8), Y6
	VMOVUPD     96(SI)(AX*8), Y7
	VSUBPD      (DI)(AX*8), Y4, Y4
	VSUBPD      32(DI)(AX*8), Y5, Y5
	VSUBPD      64(DI)(AX*8), Y6, Y6
	VSUBPD      96(DI)(AX*8), Y7, Y7
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
	VFMADD231PD Y6, Y6, Y2
	VFMADD231PD Y7, Y7, Y3
	ADDQ        $16, AX
	JMP         sqd_loop16

sqd_tail4:
	MOVQ CX, DX
	ANDQ $-4, DX

sqd_loop4:
	CMPQ        AX, DX
	JGE         sqd_reduce
	VMOVUPD     (SI)(AX*8), Y4
	VSUBPD      (DI)(AX*8), Y4, Y4
	VFMADD231PD Y4, Y4, Y0
	ADDQ        $4, AX
	JMP         sqd_loop4

sqd_reduce:
	REDUCE16

sqd_tail1:
	CMPQ        AX, CX
	JGE         sqd_done
	VMOVSD      (SI)(AX*8), X4
	VSUBSD      (DI)(AX*8), X4, X4
	VFMADD231SD X4, X4, X0
	INCQ        AX
	JMP         sqd_tail1

sqd_done:
	VMOVSD X0, ret+48(FP)
	VZEROUPPER
	RET
