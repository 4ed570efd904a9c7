// Package ctmexample holds the correlated topic model (Wang & Blei 2013,
// §4.1 and Appendix B). Its z updates (conjugate) are not generated yet, so
// the package is generated with -kernels: the data types and the
// per-document derivative kernels of f(θ_d), which the tests check against
// Appendix B and benchmark against a hand-written implementation of it.
package ctmexample

//go:generate go run ../../cmd/vigen gen -kernels -o ctm ctm.vi
