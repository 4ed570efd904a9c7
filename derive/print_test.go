package derive

import "testing"

// TestStringSigns: String keeps what a sign applies to.
func TestStringSigns(t *testing.T) {
	n := Index{Name: "n", Size: "N"}
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{Add(SizeE("N"), Neg(Add(T("b"), Call1("exp", T("c"))))), "N − (b + exp(c))"},
		{Add(T("a"), Neg(T("b"))), "a − b"},
		{Add(T("a"), Mul(N(-2), T("b"))), "a − 2·b"},
		{Neg(Sum([]Index{n}, T("x", IxE(n)))), "−(Σ_n x[n])"},
	} {
		if got := String(c.e); got != c.want {
			t.Errorf("String = %q, want %q", got, c.want)
		}
	}
}
