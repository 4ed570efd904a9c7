package spec

import (
	"testing"

	"github.com/vigen-go/vigen/spec/ir"
)

// A let is expanded where it is used, with the nodes of its definition
// (and their positions) and its loop indices replaced by the indices of
// the use; a factor statement is a Factor without target.
func TestLetExpandsAndFactorIsATerm(t *testing.T) {
	const src = `model lets
size N, P, J
data x : real[J, P]
data y : real[N]
data group : int[N] in 1..J
latent beta : real[P] nonconjugate laplace
beta ~ Normal(0, 1)
for j in 1:J {
  let eta[j] = dot(x[j], beta)
}
for n in 1:N {
  let mu = eta[group[n]] + 1
  y[n] ~ Normal(mu, 1)
  factor -0.5 * mu^2
}
`
	m, err := Load("lets.vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, m)
	if len(m.Factors) != 3 {
		t.Fatalf("%d factors, want 3", len(m.Factors))
	}
	lik, term := m.Factors[1], m.Factors[2]
	if got, want := exprString(lik.Args[0]), "dot(x[group[n]], beta) + 1"; got != want {
		t.Errorf("the mean expands to %s, want %s", got, want)
	}
	call := lik.Args[0].(*ir.Binary).X.(*ir.Call)
	if p := call.Pos; p.Line != 9 || p.Col != 16 {
		t.Errorf("the expanded dot keeps position %v, want that of the definition, lets.vi:9:16", p)
	}
	if p := call.Args[0].(*ir.Ref).Index[0].Position(); p.Line != 12 || p.Col != 16 {
		t.Errorf("the substituted index group[n] is at %v, want that of the use, lets.vi:12:16", p)
	}
	if !term.IsTerm() || term.Target != nil || term.Dist != "" || len(term.Plates) != 1 || term.Plates[0].Index != "n" {
		t.Errorf("factor statement: IsTerm %v, target %v, dist %q, plates %v", term.IsTerm(), term.Target, term.Dist, term.Plates)
	}
	if got, want := exprString(term.Args[0]), "-0.5 * ((dot(x[group[n]], beta) + 1) ^ 2)"; got != want {
		t.Errorf("factor term = %s, want %s", got, want)
	}
	if ch := m.Children("beta"); len(ch) != 2 || ch[1] != term {
		t.Errorf("Children(beta) = %v, want the likelihood and the factor term", ch)
	}
	if m.Prior("beta") != m.Factors[0] {
		t.Errorf("Prior(beta) is not its ~ statement")
	}
}
