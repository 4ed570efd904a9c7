//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA kernels for vec.go. Called only when hasAVX2FMA is true.
//
// Every result element is computed by the same correctly rounded operations,
// in the same order, as the pure-Go reference in vec.go, so the results are
// bit-identical (a NaN result is a NaN on both paths; see vec.go on
// payloads). Operand positions follow what the Go compiler emits today, for
// NaN payloads to agree where they can: math.FMA(x, y, z) is VFMADD231SD
// with z the destination, x the second source and y the third, and
// alpha*x[a] is multiplied with x[a] as the first source.
//
// Register use: only AX, BX, CX, DX, SI, DI, R8-R13 and X0-X11/Y0-Y11
// (no BP, R14, R15 or X15).

// func syrUpperAVX2(h []float64, n int, alpha float64, x []float64)
//
// for a := 0; a < n; a++ { s := alpha*x[a]; h[a*n+b] = fma(s, x[b], h[a*n+b]) for b ≥ a }
TEXT ·syrUpperAVX2(SB), NOSPLIT, $0-64
	MOVQ  h_base+0(FP), DX    // DX = &h[a*n+a]
	MOVQ  n+24(FP), CX
	MOVSD alpha+32(FP), X8
	MOVQ  x_base+40(FP), BX   // BX = &x[a]
	TESTQ CX, CX
	JLE   syr_done
	MOVQ  CX, R8
	INCQ  R8
	SHLQ  $3, R8              // R8 = (n+1)*8, from h[a*n+a] to h[(a+1)*n+a+1]
	MOVQ  CX, R9              // R9 = n-a, the length of row a's segment

syr_row:
	VMOVSD       (BX), X0
	VMULSD       X8, X0, X0   // s = x[a] * alpha
	VBROADCASTSD X0, Y0
	XORQ         AX, AX
	MOVQ         R9, R10
	ANDQ         $-16, R10

syr_loop16:
	CMPQ        AX, R10
	JGE         syr_tail4
	VMOVUPD     (DX)(AX*8), Y1
	VMOVUPD     32(DX)(AX*8), Y2
	VMOVUPD     64(DX)(AX*8), Y3
	VMOVUPD     96(DX)(AX*8), Y4
	VFMADD231PD (BX)(AX*8), Y0, Y1
	VFMADD231PD 32(BX)(AX*8), Y0, Y2
	VFMADD231PD 64(BX)(AX*8), Y0, Y3
	VFMADD231PD 96(BX)(AX*8), Y0, Y4
	VMOVUPD     Y1, (DX)(AX*8)
	VMOVUPD     Y2, 32(DX)(AX*8)
	VMOVUPD     Y3, 64(DX)(AX*8)
	VMOVUPD     Y4, 96(DX)(AX*8)
	ADDQ        $16, AX
	JMP         syr_loop16

syr_tail4:
	MOVQ R9, R10
	ANDQ $-4, R10

syr_loop4:
	CMPQ        AX, R10
	JGE         syr_tail2
	VMOVUPD     (DX)(AX*8), Y1
	VFMADD231PD (BX)(AX*8), Y0, Y1
	VMOVUPD     Y1, (DX)(AX*8)
	ADDQ        $4, AX
	JMP         syr_loop4

	// (n-a)&3 elements remain: two, then one.
syr_tail2:
	TESTQ       $2, R9
	JZ          syr_tail1
	VMOVUPD     (DX)(AX*8), X1
	VFMADD231PD (BX)(AX*8), X0, X1
	VMOVUPD     X1, (DX)(AX*8)
	ADDQ        $2, AX

syr_tail1:
	TESTQ       $1, R9
	JZ          syr_next
	VMOVSD      (DX)(AX*8), X1
	VFMADD231SD (BX)(AX*8), X0, X1
	VMOVSD      X1, (DX)(AX*8)

syr_next:
	ADDQ R8, DX
	ADDQ $8, BX
	DECQ R9
	JNZ  syr_row

syr_done:
	VZEROUPPER
	RET

// func syrk4AVX2(h []float64, n int, alpha []float64, xs []float64)
//
// len(alpha) is a positive multiple of 4. For each group of four rows
// x0..x3 of xs (weights a0..a3), one pass over the upper triangle:
// h[a*n+b] = fma(s3, x3[b], fma(s2, x2[b], fma(s1, x1[b], fma(s0, x0[b], h[a*n+b]))))
// with sk = ak*xk[a].
TEXT ·syrk4AVX2(SB), NOSPLIT, $0-80
	MOVQ  n+24(FP), CX
	MOVQ  xs_base+56(FP), SI  // SI = x0, the first row of the group
	TESTQ CX, CX
	JLE   syrk_done
	MOVQ  CX, R11
	SHLQ  $3, R11             // R11 = n*8, the row stride
	MOVQ  CX, R13
	SUBQ  $7, R13             // R13 = n-7: 8 more elements fit while b < n-7
	XORQ  R12, R12            // R12 = r, the group's first row

syrk_group:
	CMPQ   R12, alpha_len+40(FP)
	JGE    syrk_done
	MOVQ   alpha_base+32(FP), AX
	VMOVSD (AX)(R12*8), X8    // a0
	VMOVSD 8(AX)(R12*8), X9   // a1
	VMOVSD 16(AX)(R12*8), X10 // a2
	VMOVSD 24(AX)(R12*8), X11 // a3
	LEAQ   (SI)(R11*1), R8    // x1
	LEAQ   (R8)(R11*1), R9    // x2
	LEAQ   (R9)(R11*1), R10   // x3
	MOVQ   h_base+0(FP), DX   // DX = &h[a*n]
	XORQ   BX, BX             // BX = a

syrk_row:
	VMOVSD       (SI)(BX*8), X0
	VMOVSD       (R8)(BX*8), X1
	VMOVSD       (R9)(BX*8), X2
	VMOVSD       (R10)(BX*8), X3
	VMULSD       X8, X0, X0           // s0 = x0[a] * a0
	VMULSD       X9, X1, X1           // s1 = x1[a] * a1
	VMULSD       X10, X2, X2          // s2 = x2[a] * a2
	VMULSD       X11, X3, X3          // s3 = x3[a] * a3
	VBROADCASTSD X0, Y0
	VBROADCASTSD X1, Y1
	VBROADCASTSD X2, Y2
	VBROADCASTSD X3, Y3
	MOVQ         BX, AX               // AX = b

syrk_loop8:
	CMPQ        AX, R13
	JGE         syrk_loop4
	VMOVUPD     (DX)(AX*8), Y4
	VMOVUPD     32(DX)(AX*8), Y5
	VFMADD231PD (SI)(AX*8), Y0, Y4
	VFMADD231PD 32(SI)(AX*8), Y0, Y5
	VFMADD231PD (R8)(AX*8), Y1, Y4
	VFMADD231PD 32(R8)(AX*8), Y1, Y5
	VFMADD231PD (R9)(AX*8), Y2, Y4
	VFMADD231PD 32(R9)(AX*8), Y2, Y5
	VFMADD231PD (R10)(AX*8), Y3, Y4
	VFMADD231PD 32(R10)(AX*8), Y3, Y5
	VMOVUPD     Y4, (DX)(AX*8)
	VMOVUPD     Y5, 32(DX)(AX*8)
	ADDQ        $8, AX
	JMP         syrk_loop8

syrk_loop4:
	LEAQ        4(AX), DI
	CMPQ        DI, CX
	JGT         syrk_tail2
	VMOVUPD     (DX)(AX*8), Y4
	VFMADD231PD (SI)(AX*8), Y0, Y4
	VFMADD231PD (R8)(AX*8), Y1, Y4
	VFMADD231PD (R9)(AX*8), Y2, Y4
	VFMADD231PD (R10)(AX*8), Y3, Y4
	VMOVUPD     Y4, (DX)(AX*8)
	MOVQ        DI, AX
	JMP         syrk_loop4

	// DI = n-b < 4 elements remain: two, then one.
syrk_tail2:
	MOVQ        CX, DI
	SUBQ        AX, DI
	TESTQ       $2, DI
	JZ          syrk_tail1
	VMOVUPD     (DX)(AX*8), X4
	VFMADD231PD (SI)(AX*8), X0, X4
	VFMADD231PD (R8)(AX*8), X1, X4
	VFMADD231PD (R9)(AX*8), X2, X4
	VFMADD231PD (R10)(AX*8), X3, X4
	VMOVUPD     X4, (DX)(AX*8)
	ADDQ        $2, AX

syrk_tail1:
	TESTQ       $1, DI
	JZ          syrk_next_row
	VMOVSD      (DX)(AX*8), X4
	VFMADD231SD (SI)(AX*8), X0, X4
	VFMADD231SD (R8)(AX*8), X1, X4
	VFMADD231SD (R9)(AX*8), X2, X4
	VFMADD231SD (R10)(AX*8), X3, X4
	VMOVSD      X4, (DX)(AX*8)

syrk_next_row:
	ADDQ R11, DX
	INCQ BX
	CMPQ BX, CX
	JLT  syrk_row

	// Next group: rows r+4..r+7 start four strides on.
	LEAQ (R10)(R11*1), SI
	ADDQ $4, R12
	JMP  syrk_group

syrk_done:
	VZEROUPPER
	RET

// func axpyFMAAVX2(alpha float64, x, y []float64)
//
// y[i] = fma(alpha, x[i], y[i]) for i < len(x).
TEXT ·axpyFMAAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSD alpha+0(FP), Y0
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-16, DX

axpy_loop16:
	CMPQ        AX, DX
	JGE         axpy_tail4
	VMOVUPD     (DI)(AX*8), Y1
	VMOVUPD     32(DI)(AX*8), Y2
	VMOVUPD     64(DI)(AX*8), Y3
	VMOVUPD     96(DI)(AX*8), Y4
	VFMADD231PD (SI)(AX*8), Y0, Y1
	VFMADD231PD 32(SI)(AX*8), Y0, Y2
	VFMADD231PD 64(SI)(AX*8), Y0, Y3
	VFMADD231PD 96(SI)(AX*8), Y0, Y4
	VMOVUPD     Y1, (DI)(AX*8)
	VMOVUPD     Y2, 32(DI)(AX*8)
	VMOVUPD     Y3, 64(DI)(AX*8)
	VMOVUPD     Y4, 96(DI)(AX*8)
	ADDQ        $16, AX
	JMP         axpy_loop16

axpy_tail4:
	MOVQ CX, DX
	ANDQ $-4, DX

axpy_loop4:
	CMPQ        AX, DX
	JGE         axpy_tail2
	VMOVUPD     (DI)(AX*8), Y1
	VFMADD231PD (SI)(AX*8), Y0, Y1
	VMOVUPD     Y1, (DI)(AX*8)
	ADDQ        $4, AX
	JMP         axpy_loop4

axpy_tail2:
	TESTQ       $2, CX
	JZ          axpy_tail1
	VMOVUPD     (DI)(AX*8), X1
	VFMADD231PD (SI)(AX*8), X0, X1
	VMOVUPD     X1, (DI)(AX*8)
	ADDQ        $2, AX

axpy_tail1:
	TESTQ       $1, CX
	JZ          axpy_done
	VMOVSD      (DI)(AX*8), X1
	VFMADD231SD (SI)(AX*8), X0, X1
	VMOVSD      X1, (DI)(AX*8)

axpy_done:
	VZEROUPPER
	RET

// func mulVecAVX2(dst, x, y []float64)
//
// dst[i] = x[i] * y[i] for i < len(dst).
TEXT ·mulVecAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX

mul_loop16:
	CMPQ    AX, BX
	JGE     mul_tail4
	VMOVUPD (SI)(AX*8), Y1
	VMOVUPD 32(SI)(AX*8), Y2
	VMOVUPD 64(SI)(AX*8), Y3
	VMOVUPD 96(SI)(AX*8), Y4
	VMULPD  (DX)(AX*8), Y1, Y1
	VMULPD  32(DX)(AX*8), Y2, Y2
	VMULPD  64(DX)(AX*8), Y3, Y3
	VMULPD  96(DX)(AX*8), Y4, Y4
	VMOVUPD Y1, (DI)(AX*8)
	VMOVUPD Y2, 32(DI)(AX*8)
	VMOVUPD Y3, 64(DI)(AX*8)
	VMOVUPD Y4, 96(DI)(AX*8)
	ADDQ    $16, AX
	JMP     mul_loop16

mul_tail4:
	MOVQ CX, BX
	ANDQ $-4, BX

mul_loop4:
	CMPQ    AX, BX
	JGE     mul_tail2
	VMOVUPD (SI)(AX*8), Y1
	VMULPD  (DX)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     mul_loop4

mul_tail2:
	TESTQ   $2, CX
	JZ      mul_tail1
	VMOVUPD (SI)(AX*8), X1
	VMULPD  (DX)(AX*8), X1, X1
	VMOVUPD X1, (DI)(AX*8)
	ADDQ    $2, AX

mul_tail1:
	TESTQ  $1, CX
	JZ     mul_done
	VMOVSD (SI)(AX*8), X1
	VMULSD (DX)(AX*8), X1, X1
	VMOVSD X1, (DI)(AX*8)

mul_done:
	VZEROUPPER
	RET

// func dotFMAAVX2(x, y []float64) float64
//
// The order documented at DotFMA: Y0..Y3 hold the sixteen lanes
// acc[0..3], acc[4..7], acc[8..11], acc[12..15].
TEXT ·dotFMAAVX2(SB), NOSPLIT, $0-56
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

dot_loop16:
	CMPQ        AX, DX
	JGE         dot_tail4
	VMOVUPD     (SI)(AX*8), Y4
	VMOVUPD     32(SI)(AX*8), Y5
	VMOVUPD     64(SI)(AX*8), Y6
	VMOVUPD     96(SI)(AX*8), Y7
	VFMADD231PD (DI)(AX*8), Y4, Y0
	VFMADD231PD 32(DI)(AX*8), Y5, Y1
	VFMADD231PD 64(DI)(AX*8), Y6, Y2
	VFMADD231PD 96(DI)(AX*8), Y7, Y3
	ADDQ        $16, AX
	JMP         dot_loop16

dot_tail4:
	MOVQ CX, DX
	ANDQ $-4, DX

dot_loop4:
	CMPQ        AX, DX
	JGE         dot_reduce
	VMOVUPD     (SI)(AX*8), Y4
	VFMADD231PD (DI)(AX*8), Y4, Y0
	ADDQ        $4, AX
	JMP         dot_loop4

dot_reduce:
	// t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j]), even when
	// n < 16 and acc[4..15] are +0: an accumulator can be -0 (an FMA whose
	// exact result is a negative number that rounds to zero), and -0 + +0
	// is +0.
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0

	// s = (t0 + t2) + (t1 + t3)
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0

dot_tail1:
	CMPQ        AX, CX
	JGE         dot_done
	VMOVSD      (SI)(AX*8), X1
	VFMADD231SD (DI)(AX*8), X1, X0
	INCQ        AX
	JMP         dot_tail1

dot_done:
	VMOVSD X0, ret+48(FP)
	VZEROUPPER
	RET
