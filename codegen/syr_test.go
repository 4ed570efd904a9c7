package codegen

import (
	"regexp"
	"strings"
	"testing"
)

// TestRankOneHessianIsSyr: a Hessian term that is a sum over data of
// w_n·u_n(a)·u_n(b) is scheduled as one rank-1 update per data point
// (gathered by a runtime.SyrBatch, flushed before the mirror),
// reading a row of the data in place where u_n is one (a GLM's x[n]) and
// computing u_n once where it is a product (the collapsed topic model's
// e^θ ⊙ β_{·,w}), which the gradient and the normalizer then reuse. (The
// values are checked end to end by the hand-written Newton and coordinate
// ascent tests, and in examples/ctm and examples/logreg.)
func TestRankOneHessianIsSyr(t *testing.T) {
	glm := `model glm
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const S : cov[P] = eye(P)
latent theta : real[P] nonconjugate laplace
theta ~ MvNormal(0, S)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))
}
`
	src := generatedSource(t, "glm", glm)
	if !regexp.MustCompile(`hessSyr\.Add\([^\n]*, x\[n\*P:\]\[:P\]\)`).MatchString(src) ||
		!regexp.MustCompile(`hessSyr\.Flush\(\)\n\s*runtime\.MirrorUpper\(hess, P\)`).MatchString(kernelOf(src, "ThetaF")) {
		t.Errorf("the logistic regression's Hessian is not a SyrUpper on the row x[n]:\n%s", kernelOf(src, "ThetaF"))
	}
	if strings.Contains(kernelOf(src, "ThetaF"), "for b := a; b < P; b++") {
		t.Errorf("ThetaF still loops over the Hessian's triangle:\n%s", kernelOf(src, "ThetaF"))
	}

	topics := `model topics
size D, K, V
data w : bag[D] of 1..V
param beta : simplex[K, V]
const S : cov[K] = eye(K)
latent theta : real[D, K] nonconjugate laplace
latent z : int[D, w] in 1..K conjugate
for d in 1:D {
  theta[d] ~ MvNormal(0, S)
  for n in w[d] {
    z[d, n] ~ Categorical(softmax(theta[d]))
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
}
`
	k := kernelOf(generatedSource(t, "topics", topics), "ThetaCollapsed")
	m := regexp.MustCompile(`hessSyr\.Add\([^\n]*, (t\d+)\)`).FindStringSubmatch(k)
	if m == nil {
		t.Fatalf("the collapsed objective's Hessian is not a SyrUpper:\n%s", k)
	}
	u := m[1]
	// u = e^θ ⊙ β_{·,w} is gathered once per entry and read by the
	// normalizer and the gradient instead of a second gather.
	if n := strings.Count(k, "betaT["); n != 1 {
		t.Errorf("beta is read %d times in ThetaCollapsed, want once (into %s):\n%s", n, u, k)
	}
	if !strings.Contains(k, "grad[a] += "+u+"[a]") {
		t.Errorf("the gradient does not read %s:\n%s", u, k)
	}
	// β is read at a document's term for every topic: a row of its
	// transposed copy, recomputed with the other aux values, multiplied
	// into u by one vectorized call.
	if !regexp.MustCompile(`runtime\.MulVec\(` + u + `, t\d+, betaT\[\(wTerm\[n\d*\]-1\)\*K:\]\[:K\]\)`).MatchString(k) {
		t.Errorf("ThetaCollapsed does not read β term-major:\n%s", k)
	}
	src = generatedSource(t, "topics", topics)
	if !strings.Contains(src, "m.betaT = runtime.Transpose(m.beta, m.k)") {
		t.Errorf("computeAux does not transpose β:\n%s", grepLines(src, "betaT"))
	}
	// the ELBO's log β_k,w at every entry is read from log β, computed
	// after the transpose, once per M-step
	aux := kernelOf(src, "computeAux")
	if i, j := strings.Index(aux, "m.betaT = "), strings.Index(aux, "m.betaTLog = runtime.LogOf(m.betaT)"); i < 0 || j < i {
		t.Errorf("computeAux does not take log β after transposing it:\n%s", aux)
	}
	if e := kernelOf(src, "elboUnit"); strings.Contains(e, "math.Log(betaT") || !strings.Contains(e, "betaTLog[(wTerm[n") {
		t.Errorf("elboUnit takes log β per entry:\n%s", e)
	}
}

// kernelOf returns the generated method called name.
func kernelOf(src, name string) string {
	i := strings.Index(src, ") "+name+"(")
	if i < 0 {
		return ""
	}
	j := strings.Index(src[i:], "\n}\n")
	if j < 0 {
		return src[i:]
	}
	return src[i : i+j]
}

// TestHoistedExpTransposed: the exponentials of E[log β] that LDA's
// categorical update reads at a document's term for every topic are
// stored transposed (term-major), so each read is contiguous, and every
// place that sets them writes the transpose.
func TestHoistedExpTransposed(t *testing.T) {
	lda := `model lda
size D, K, V
data w : bag[D] of 1..V
const alpha : real = 0.1
const eta : real = 0.01
latent beta : simplex[K, V] conjugate
latent theta : simplex[D, K] conjugate
latent z : int[D, w] in 1..K conjugate
for k in 1:K {
  beta[k] ~ Dirichlet(eta)
}
for d in 1:D {
  theta[d] ~ Dirichlet(alpha)
  for n in w[d] {
    z[d, n] ~ Categorical(theta[d])
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
}
`
	src := generatedSource(t, "lda", lda)
	k := kernelOf(src, "ZNaturalExp")
	// a term's row of the transposed table, multiplied into the entry's
	// probabilities by one vectorized call
	if !regexp.MustCompile(`runtime\.MulAddFMA\(prob\[n\d*\*K:\]\[:K\], t\d+, betaElogExp\[\(wTerm\[n\d*\]-1\)\*K:\]\[:K\]\)`).MatchString(k) {
		t.Errorf("ZNaturalExp does not read exp(E[log β]) term-major:\n%s", k)
	}
	if strings.Contains(src, "runtime.ExpTo(q.betaElogExp") || !strings.Contains(src, "runtime.ExpToTransposed(q.betaElogExp, q.betaElog, m.k)") {
		t.Errorf("exp(E[log β]) is not set transposed everywhere:\n%s", grepLines(src, "betaElogExp"))
	}
}

// grepLines returns the lines of src that contain s.
func grepLines(src, s string) string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestDotProductsAreDotFMA: a sum over a whole dimension of the product of
// two rows (the linear predictor x[n]·θ, a row of a covariance times x[n])
// is printed as runtime.DotFMA on the two slices.
func TestDotProductsAreDotFMA(t *testing.T) {
	src := generatedSource(t, "glm", `model glm
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const S : cov[P] = eye(P)
latent theta : real[P] nonconjugate laplace
theta ~ MvNormal(0, S)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))
}
`)
	k := kernelOf(src, "ThetaF")
	if !regexp.MustCompile(`t\d+ := runtime\.DotFMA\(theta\[:P\], x\[n\*P:\]\[:P\]\)`).MatchString(k) {
		t.Errorf("ThetaF's linear predictor is not a DotFMA:\n%s", k)
	}
	if e := kernelOf(src, "elboGlobal"); !strings.Contains(e, "runtime.DotFMA(thetaCov[") {
		t.Errorf("elboGlobal's x[n]ᵀΣ row products are not DotFMA:\n%s", e)
	}
}
