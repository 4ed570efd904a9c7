//go:build amd64 && !purego

package runtime

// The kernels of rowops.go, implemented in rowops_amd64.s; the exported
// functions call them when useAVX2 (vec_amd64.go) is set. Their callers
// have already checked the lengths: every slice holds exactly the elements
// the kernel reads or writes.

// mulAddFMAAVX2 is MulAddFMA. len(x) == len(y) == len(dst) > 0.
//
//go:noescape
func mulAddFMAAVX2(dst, x, y []float64)

// sumVecAVX2 is SumVec.
//
//go:noescape
func sumVecAVX2(x []float64) float64

// scaleVecAVX2 is ScaleVec.
//
//go:noescape
func scaleVecAVX2(x []float64, a float64)

// sqDistAVX2 is SqDist. len(y) == len(x).
//
//go:noescape
func sqDistAVX2(x, y []float64) float64
