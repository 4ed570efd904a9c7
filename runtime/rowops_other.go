//go:build !amd64 || purego

package runtime

// Without the amd64 assembly the row primitives use their pure-Go
// reference implementations in rowops.go.

func mulAddFMAAVX2(dst, x, y []float64) { mulAddFMAGo(dst, x, y) }

func sumVecAVX2(x []float64) float64 { return sumVecGo(x) }

func scaleVecAVX2(x []float64, a float64) { scaleVecGo(x, a) }

func sqDistAVX2(x, y []float64) float64 { return sqDistGo(x, y) }
