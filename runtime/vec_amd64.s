//go:build amd64 && !purego

#include "textflag.h"
#include "funcdata.h"

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
// Register use: only AX, BX, CX, DX, SI, DI, R8-R13 (no BP, R14 or R15),
// and X0-X11/Y0-Y11, except syrkTileAVX2, which needs all sixteen Y
// registers: these are ABI0 functions, and Go code calling one re-zeroes
// X15 (its zero register) when it returns.

// TILE_STORE_COL0 stores the first column vector of a syrkTileAVX2 tile
// (columns b..b+3 of rows a0..a0+3).
#define TILE_STORE_COL0 \
	VMOVUPD Y0, (R9); \
	VMOVUPD Y3, (R9)(R8*1); \
	VMOVUPD Y6, (R9)(R8*2); \
	VMOVUPD Y9, (R13)

// TILE_STORE_DIAG stores it when b = a0, only on and above the diagonal:
// row a0+i, lanes i..3.
#define TILE_STORE_DIAG \
	VMOVUPD      Y0, (R9); \
	VMOVHPD      X3, 8(R9)(R8*1); \
	VEXTRACTF128 $1, Y3, 16(R9)(R8*1); \
	VEXTRACTF128 $1, Y6, 16(R9)(R8*2); \
	VEXTRACTF128 $1, Y9, X9; \
	VMOVHPD      X9, 24(R13)

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

// func syrkTileAVX2(h []float64, n int, alpha []float64, xs []float64)
//
// SyrkUpper for 1 ≤ len(alpha) ≤ 16 rows of xs and n ≥ 4, register-blocked.
// A tile of h is loaded once, receives every row r of xs in order, each
// element h[a*n+b] = fma(s[r][a], xs[r*n+b], h[a*n+b]) with
// s[r][a] = xs[r*n+a] * alpha[r] (the product rounded as in SyrUpper,
// computed into the frame once per group of rows), and is stored once.
// Each element thus sees the same FMAs in the same order as SyrUpper
// applied row by row.
//
// With d = n&3, the rows a ≥ d are taken four at a time, a0..a0+3 with
// a0 ≡ d mod 4, so that each block's width n-a0 is a multiple of 4, and its
// columns b ≥ a0 in tiles of 4×12 (4×8 or 4×4 where fewer remain). The
// first tile of a block starts on the diagonal (b = a0): its first 4×4
// square is computed in full (reading the strictly lower elements too) but
// stored only on and above the diagonal. The top rows a < d (none when n is
// a multiple of 4) are done first: their columns b < d as one 3×4 tile,
// columns 0..3 of rows 0..2, stored with a lane mask where a ≤ b < d; their
// columns b ≥ d in tiles of 2×16 (2×8, 2×4) for rows 0 and 1, and of 1×32
// (1×16, 1×8, 1×4) for the last row when d is odd.
//
// Registers: Y0..Y11 the tile (in a block, row a0+i, columns b+4k..b+4k+3
// in Y(3i+k)), Y12..Y14 a row of xs, Y15 a broadcast s; DI = &h[a0*n],
// SI = &xs[0], BX = a0 (first d), AX = b, CX = n, R8 = n*8,
// R9 = &h[a0*n+b], R13 = &h[(a0+3)*n+b], R10 = &xs[r*n+b], R11 = &s[r],
// R12 = &s[m], DX scratch. s holds 32 bytes per row of xs (four values)
// in the frame.
TEXT ·syrkTileAVX2(SB), 0, $512-80
	NO_LOCAL_POINTERS
	MOVQ h_base+0(FP), DI
	MOVQ n+24(FP), CX
	MOVQ xs_base+56(FP), SI
	MOVQ CX, R8
	SHLQ $3, R8
	MOVQ alpha_len+40(FP), R12
	SHLQ $5, R12
	LEAQ 0(SP), AX
	ADDQ AX, R12

	// The top rows a < d = n&3 (if any): first the corner, columns b < d.
	MOVQ CX, BX
	ANDQ $3, BX
	JZ   block

	// s[r][0..3] = xs[r*n .. r*n+3] * alpha[r]
	MOVQ alpha_base+32(FP), DX
	MOVQ SI, R10
	LEAQ 0(SP), R11

top_s:
	VBROADCASTSD (DX), Y15
	VMOVUPD      (R10), Y12
	VMULPD       Y15, Y12, Y12
	VMOVUPD      Y12, (R11)
	ADDQ         $8, DX
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          top_s

	// Columns 0..3 of rows 0..2 (n ≥ 4), stored only at a ≤ b < d.
	VMOVUPD (DI), Y0
	VMOVUPD (DI)(R8*1), Y1
	VMOVUPD (DI)(R8*2), Y2
	MOVQ    SI, R10
	LEAQ    0(SP), R11

corner_r:
	VMOVUPD      (R10), Y12
	VBROADCASTSD (R11), Y13
	VBROADCASTSD 8(R11), Y14
	VBROADCASTSD 16(R11), Y15
	VFMADD231PD  Y12, Y13, Y0
	VFMADD231PD  Y12, Y14, Y1
	VFMADD231PD  Y12, Y15, Y2
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          corner_r

	LEAQ       syrkLanesBelow<>(SB), DX
	MOVQ       BX, AX
	SHLQ       $5, AX
	VMOVUPD    (DX)(AX*1), Y3  // lanes < d
	VMOVUPD    32(DX), Y4      // lanes < 1
	VMOVUPD    64(DX), Y5      // lanes < 2
	VANDNPD    Y3, Y4, Y4      // 1 ≤ lanes < d
	VANDNPD    Y3, Y5, Y5      // 2 ≤ lanes < d
	VMASKMOVPD Y0, Y3, (DI)
	VMASKMOVPD Y1, Y4, (DI)(R8*1)
	VMASKMOVPD Y2, Y5, (DI)(R8*2)

	// Rows 0 and 1 (d ≥ 2), columns d..n-1, in tiles of 2×16, 2×8, 2×4:
	// Y0..Y3 row 0, Y4..Y7 row 1, Y8..Y11 a row of xs.
	CMPQ BX, $2
	JLT  top_single
	MOVQ BX, AX

pair16:
	LEAQ    16(AX), DX
	CMPQ    DX, CX
	JGT     pair8
	LEAQ    (DI)(AX*8), R9
	VMOVUPD (R9), Y0
	VMOVUPD 32(R9), Y1
	VMOVUPD 64(R9), Y2
	VMOVUPD 96(R9), Y3
	VMOVUPD (R9)(R8*1), Y4
	VMOVUPD 32(R9)(R8*1), Y5
	VMOVUPD 64(R9)(R8*1), Y6
	VMOVUPD 96(R9)(R8*1), Y7
	LEAQ    (SI)(AX*8), R10
	LEAQ    0(SP), R11

pair16_r:
	VMOVUPD      (R10), Y8
	VMOVUPD      32(R10), Y9
	VMOVUPD      64(R10), Y10
	VMOVUPD      96(R10), Y11
	VBROADCASTSD (R11), Y12
	VBROADCASTSD 8(R11), Y13
	VFMADD231PD  Y8, Y12, Y0
	VFMADD231PD  Y9, Y12, Y1
	VFMADD231PD  Y10, Y12, Y2
	VFMADD231PD  Y11, Y12, Y3
	VFMADD231PD  Y8, Y13, Y4
	VFMADD231PD  Y9, Y13, Y5
	VFMADD231PD  Y10, Y13, Y6
	VFMADD231PD  Y11, Y13, Y7
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          pair16_r

	VMOVUPD Y0, (R9)
	VMOVUPD Y1, 32(R9)
	VMOVUPD Y2, 64(R9)
	VMOVUPD Y3, 96(R9)
	VMOVUPD Y4, (R9)(R8*1)
	VMOVUPD Y5, 32(R9)(R8*1)
	VMOVUPD Y6, 64(R9)(R8*1)
	VMOVUPD Y7, 96(R9)(R8*1)
	MOVQ    DX, AX
	JMP     pair16

pair8:
	LEAQ    8(AX), DX
	CMPQ    DX, CX
	JGT     pair4
	LEAQ    (DI)(AX*8), R9
	VMOVUPD (R9), Y0
	VMOVUPD 32(R9), Y1
	VMOVUPD (R9)(R8*1), Y4
	VMOVUPD 32(R9)(R8*1), Y5
	LEAQ    (SI)(AX*8), R10
	LEAQ    0(SP), R11

pair8_r:
	VMOVUPD      (R10), Y8
	VMOVUPD      32(R10), Y9
	VBROADCASTSD (R11), Y12
	VBROADCASTSD 8(R11), Y13
	VFMADD231PD  Y8, Y12, Y0
	VFMADD231PD  Y9, Y12, Y1
	VFMADD231PD  Y8, Y13, Y4
	VFMADD231PD  Y9, Y13, Y5
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          pair8_r

	VMOVUPD Y0, (R9)
	VMOVUPD Y1, 32(R9)
	VMOVUPD Y4, (R9)(R8*1)
	VMOVUPD Y5, 32(R9)(R8*1)
	MOVQ    DX, AX

pair4:
	CMPQ    AX, CX
	JGE     top_single
	LEAQ    (DI)(AX*8), R9
	VMOVUPD (R9), Y0
	VMOVUPD (R9)(R8*1), Y4
	LEAQ    (SI)(AX*8), R10
	LEAQ    0(SP), R11

pair4_r:
	VMOVUPD      (R10), Y8
	VBROADCASTSD (R11), Y12
	VBROADCASTSD 8(R11), Y13
	VFMADD231PD  Y8, Y12, Y0
	VFMADD231PD  Y8, Y13, Y4
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          pair4_r

	VMOVUPD Y0, (R9)
	VMOVUPD Y4, (R9)(R8*1)

	// Row a = d-1 when d is odd (row 0 or 2), columns d..n-1, in tiles of
	// 1×32, 1×16, 1×8, 1×4; R13 = &s[0][a], R12 = &s[m][a], DI = &h[a*n].
top_single:
	TESTQ $1, BX
	JZ    top_done
	LEAQ  -1(BX), DX
	LEAQ  0(SP)(DX*8), R13
	LEAQ  (R12)(DX*8), R12
	IMULQ R8, DX
	ADDQ  DX, DI
	MOVQ  BX, AX

top32:
	LEAQ    32(AX), DX
	CMPQ    DX, CX
	JGT     top16
	LEAQ    (DI)(AX*8), R9
	VMOVUPD (R9), Y0
	VMOVUPD 32(R9), Y1
	VMOVUPD 64(R9), Y2
	VMOVUPD 96(R9), Y3
	VMOVUPD 128(R9), Y4
	VMOVUPD 160(R9), Y5
	VMOVUPD 192(R9), Y6
	VMOVUPD 224(R9), Y7
	LEAQ    (SI)(AX*8), R10
	MOVQ    R13, R11

top32_r:
	VBROADCASTSD (R11), Y15
	VFMADD231PD  (R10), Y15, Y0
	VFMADD231PD  32(R10), Y15, Y1
	VFMADD231PD  64(R10), Y15, Y2
	VFMADD231PD  96(R10), Y15, Y3
	VFMADD231PD  128(R10), Y15, Y4
	VFMADD231PD  160(R10), Y15, Y5
	VFMADD231PD  192(R10), Y15, Y6
	VFMADD231PD  224(R10), Y15, Y7
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          top32_r

	VMOVUPD Y0, (R9)
	VMOVUPD Y1, 32(R9)
	VMOVUPD Y2, 64(R9)
	VMOVUPD Y3, 96(R9)
	VMOVUPD Y4, 128(R9)
	VMOVUPD Y5, 160(R9)
	VMOVUPD Y6, 192(R9)
	VMOVUPD Y7, 224(R9)
	MOVQ    DX, AX
	JMP     top32

top16:
	LEAQ    16(AX), DX
	CMPQ    DX, CX
	JGT     top8
	LEAQ    (DI)(AX*8), R9
	VMOVUPD (R9), Y0
	VMOVUPD 32(R9), Y1
	VMOVUPD 64(R9), Y2
	VMOVUPD 96(R9), Y3
	LEAQ    (SI)(AX*8), R10
	MOVQ    R13, R11

top16_r:
	VBROADCASTSD (R11), Y15
	VFMADD231PD  (R10), Y15, Y0
	VFMADD231PD  32(R10), Y15, Y1
	VFMADD231PD  64(R10), Y15, Y2
	VFMADD231PD  96(R10), Y15, Y3
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          top16_r

	VMOVUPD Y0, (R9)
	VMOVUPD Y1, 32(R9)
	VMOVUPD Y2, 64(R9)
	VMOVUPD Y3, 96(R9)
	MOVQ    DX, AX

top8:
	LEAQ    8(AX), DX
	CMPQ    DX, CX
	JGT     top4
	LEAQ    (DI)(AX*8), R9
	VMOVUPD (R9), Y0
	VMOVUPD 32(R9), Y1
	LEAQ    (SI)(AX*8), R10
	MOVQ    R13, R11

top8_r:
	VBROADCASTSD (R11), Y15
	VFMADD231PD  (R10), Y15, Y0
	VFMADD231PD  32(R10), Y15, Y1
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          top8_r

	VMOVUPD Y0, (R9)
	VMOVUPD Y1, 32(R9)
	MOVQ    DX, AX

top4:
	CMPQ    AX, CX
	JGE     top_single_done
	LEAQ    (DI)(AX*8), R9
	VMOVUPD (R9), Y0
	LEAQ    (SI)(AX*8), R10
	MOVQ    R13, R11

top4_r:
	VBROADCASTSD (R11), Y15
	VFMADD231PD  (R10), Y15, Y0
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          top4_r

	VMOVUPD Y0, (R9)

top_single_done:
	LEAQ  0(SP), DX
	SUBQ  DX, R13
	SUBQ  R13, R12 // R12 = &s[m] again

	// DI = &h[d*n] for the blocks, which start at a0 = d = BX.
top_done:
	MOVQ  BX, DX
	IMULQ R8, DX
	MOVQ  h_base+0(FP), DI
	ADDQ  DX, DI

	// The blocks of rows a0..a0+3, a0 = d, d+4, …, n-4.
block:
	LEAQ 4(BX), AX
	CMPQ AX, CX
	JGT  tile_done

	// s[r][0..3] = xs[r*n+a0 .. r*n+a0+3] * alpha[r]
	MOVQ alpha_base+32(FP), DX
	LEAQ (SI)(BX*8), R10
	LEAQ 0(SP), R11

block_s:
	VBROADCASTSD (DX), Y15
	VMOVUPD      (R10), Y12
	VMULPD       Y15, Y12, Y12
	VMOVUPD      Y12, (R11)
	ADDQ         $8, DX
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          block_s
	MOVQ         BX, AX

	// The next tile: 4×12 unless 4, 8 or 16 columns remain (16 as two
	// 4×8: a 4×4 tile, four independent FMA chains, waits on their latency).
tile_next:
	MOVQ CX, DX
	SUBQ AX, DX
	JZ   block_next
	CMPQ DX, $8
	JLT  tile4
	JEQ  tile8
	CMPQ DX, $16
	JEQ  tile8

	LEAQ    (DI)(AX*8), R9
	LEAQ    (R9)(R8*2), R13
	ADDQ    R8, R13
	VMOVUPD (R9), Y0
	VMOVUPD 32(R9), Y1
	VMOVUPD 64(R9), Y2
	VMOVUPD (R9)(R8*1), Y3
	VMOVUPD 32(R9)(R8*1), Y4
	VMOVUPD 64(R9)(R8*1), Y5
	VMOVUPD (R9)(R8*2), Y6
	VMOVUPD 32(R9)(R8*2), Y7
	VMOVUPD 64(R9)(R8*2), Y8
	VMOVUPD (R13), Y9
	VMOVUPD 32(R13), Y10
	VMOVUPD 64(R13), Y11
	LEAQ    (SI)(AX*8), R10
	LEAQ    0(SP), R11

tile12_r:
	VMOVUPD      (R10), Y12
	VMOVUPD      32(R10), Y13
	VMOVUPD      64(R10), Y14
	VBROADCASTSD (R11), Y15
	VFMADD231PD  Y12, Y15, Y0
	VFMADD231PD  Y13, Y15, Y1
	VFMADD231PD  Y14, Y15, Y2
	VBROADCASTSD 8(R11), Y15
	VFMADD231PD  Y12, Y15, Y3
	VFMADD231PD  Y13, Y15, Y4
	VFMADD231PD  Y14, Y15, Y5
	VBROADCASTSD 16(R11), Y15
	VFMADD231PD  Y12, Y15, Y6
	VFMADD231PD  Y13, Y15, Y7
	VFMADD231PD  Y14, Y15, Y8
	VBROADCASTSD 24(R11), Y15
	VFMADD231PD  Y12, Y15, Y9
	VFMADD231PD  Y13, Y15, Y10
	VFMADD231PD  Y14, Y15, Y11
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          tile12_r

	CMPQ AX, BX
	JNE  tile12_full
	TILE_STORE_DIAG
	JMP  tile12_rest

tile12_full:
	TILE_STORE_COL0

tile12_rest:
	VMOVUPD Y1, 32(R9)
	VMOVUPD Y2, 64(R9)
	VMOVUPD Y4, 32(R9)(R8*1)
	VMOVUPD Y5, 64(R9)(R8*1)
	VMOVUPD Y7, 32(R9)(R8*2)
	VMOVUPD Y8, 64(R9)(R8*2)
	VMOVUPD Y10, 32(R13)
	VMOVUPD Y11, 64(R13)
	ADDQ    $12, AX
	JMP     tile_next

tile8:
	LEAQ    (DI)(AX*8), R9
	LEAQ    (R9)(R8*2), R13
	ADDQ    R8, R13
	VMOVUPD (R9), Y0
	VMOVUPD 32(R9), Y1
	VMOVUPD (R9)(R8*1), Y3
	VMOVUPD 32(R9)(R8*1), Y4
	VMOVUPD (R9)(R8*2), Y6
	VMOVUPD 32(R9)(R8*2), Y7
	VMOVUPD (R13), Y9
	VMOVUPD 32(R13), Y10
	LEAQ    (SI)(AX*8), R10
	LEAQ    0(SP), R11

tile8_r:
	VMOVUPD      (R10), Y12
	VMOVUPD      32(R10), Y13
	VBROADCASTSD (R11), Y15
	VFMADD231PD  Y12, Y15, Y0
	VFMADD231PD  Y13, Y15, Y1
	VBROADCASTSD 8(R11), Y14
	VFMADD231PD  Y12, Y14, Y3
	VFMADD231PD  Y13, Y14, Y4
	VBROADCASTSD 16(R11), Y15
	VFMADD231PD  Y12, Y15, Y6
	VFMADD231PD  Y13, Y15, Y7
	VBROADCASTSD 24(R11), Y14
	VFMADD231PD  Y12, Y14, Y9
	VFMADD231PD  Y13, Y14, Y10
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          tile8_r

	CMPQ AX, BX
	JNE  tile8_full
	TILE_STORE_DIAG
	JMP  tile8_rest

tile8_full:
	TILE_STORE_COL0

tile8_rest:
	VMOVUPD Y1, 32(R9)
	VMOVUPD Y4, 32(R9)(R8*1)
	VMOVUPD Y7, 32(R9)(R8*2)
	VMOVUPD Y10, 32(R13)
	ADDQ    $8, AX
	JMP     tile_next

	// Only in the last block (b = a0 = n-4): the bottom 4×4 triangle.
tile4:
	LEAQ    (DI)(AX*8), R9
	LEAQ    (R9)(R8*2), R13
	ADDQ    R8, R13
	VMOVUPD (R9), Y0
	VMOVUPD (R9)(R8*1), Y3
	VMOVUPD (R9)(R8*2), Y6
	VMOVUPD (R13), Y9
	LEAQ    (SI)(AX*8), R10
	LEAQ    0(SP), R11

tile4_r:
	VMOVUPD      (R10), Y12
	VBROADCASTSD (R11), Y13
	VBROADCASTSD 8(R11), Y14
	VBROADCASTSD 16(R11), Y15
	VFMADD231PD  Y12, Y13, Y0
	VFMADD231PD  Y12, Y14, Y3
	VBROADCASTSD 24(R11), Y13
	VFMADD231PD  Y12, Y15, Y6
	VFMADD231PD  Y12, Y13, Y9
	ADDQ         R8, R10
	ADDQ         $32, R11
	CMPQ         R11, R12
	JLT          tile4_r

	CMPQ AX, BX
	JNE  tile4_full
	TILE_STORE_DIAG
	JMP  tile4_done

tile4_full:
	TILE_STORE_COL0

tile4_done:
	ADDQ $4, AX
	JMP  tile_next

block_next:
	ADDQ $4, BX
	LEAQ (DI)(R8*4), DI
	JMP  block

tile_done:
	VZEROUPPER
	RET

// syrkLanesBelow<>: four masks of four lanes, mask d with lanes 0..d-1 set.
DATA syrkLanesBelow<>+0(SB)/8, $0
DATA syrkLanesBelow<>+8(SB)/8, $0
DATA syrkLanesBelow<>+16(SB)/8, $0
DATA syrkLanesBelow<>+24(SB)/8, $0
DATA syrkLanesBelow<>+32(SB)/8, $-1
DATA syrkLanesBelow<>+40(SB)/8, $0
DATA syrkLanesBelow<>+48(SB)/8, $0
DATA syrkLanesBelow<>+56(SB)/8, $0
DATA syrkLanesBelow<>+64(SB)/8, $-1
DATA syrkLanesBelow<>+72(SB)/8, $-1
DATA syrkLanesBelow<>+80(SB)/8, $0
DATA syrkLanesBelow<>+88(SB)/8, $0
DATA syrkLanesBelow<>+96(SB)/8, $-1
DATA syrkLanesBelow<>+104(SB)/8, $-1
DATA syrkLanesBelow<>+112(SB)/8, $-1
DATA syrkLanesBelow<>+120(SB)/8, $0
GLOBL syrkLanesBelow<>(SB), RODATA|NOPTR, $128

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
