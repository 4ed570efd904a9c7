package runtime

import "math"

// ExpTo sets dst[i] = exp(src[i]).
func ExpTo(dst, src []float64) {
	for i, x := range src {
		dst[i] = math.Exp(x)
	}
}
