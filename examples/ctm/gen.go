// Package ctmexample holds the correlated topic model (Wang & Blei 2013,
// §4.1 and Appendix B): per-document inference of the topic weights θ_d
// (Laplace or delta) and the topic assignments z (closed form), given the
// topics β and the logistic-normal prior μ0, Σ0. The tests check the
// generated kernels and the whole per-document fit against Appendix B
// written by hand, and benchmark them.
package ctmexample

//go:generate go run ../../cmd/vigen gen -o ctm ctm.vi
