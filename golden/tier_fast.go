//go:build !slow

package golden

// slowTier reports whether the slow tier's tests run (built with -tags slow).
const slowTier = false
