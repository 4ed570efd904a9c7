package derive

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// letChainModel is a regression whose mean goes through depth lets, each
// reading the previous one twice: its derivatives written out as trees
// grow exponentially with depth.
func letChainModel(depth int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model letchain\nsize N, P\ndata x : real[N, P]\ndata y : real[N]\nlatent theta : real[P] nonconjugate laplace\ntheta ~ Normal(0, 1)\nfor n in 1:N {\n  let u0 = dot(x[n], theta)\n")
	for k := 1; k <= depth; k++ {
		fn := []string{"Phi", "logistic", "softplus", "log1p"}[k%4]
		arg := fmt.Sprintf("u%d", k-1)
		if fn == "log1p" {
			arg = fmt.Sprintf("u%d * u%d", k-1, k-1)
		}
		fmt.Fprintf(&b, "  let u%d = %s(%s) + 0.1 * u%d\n", k, fn, arg, k-1)
	}
	fmt.Fprintf(&b, "  y[n] ~ Normal(u%d, 1)\n}\n", depth)
	return b.String()
}

// TestDerivationNodeBudget: a derivation past its node budget stops with
// a positioned "too large" error at the statement it was deriving, instead
// of running until the machine's memory is gone (a 20-link let chain took
// 23 GB before it was killed); under the budget, the same model derives.
// The budget is lowered so that a 4-link chain exceeds it.
func TestDerivationNodeBudget(t *testing.T) {
	src := letChainModel(4)
	m, err := spec.Load("letchain.vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	before := nodesBuilt.Load()
	if _, err := Derive(m); err != nil {
		t.Fatalf("at the default budget: %v", err)
	}
	built := nodesBuilt.Load() - before
	t.Logf("the 4-link chain built %d nodes", built)
	defer func(v int64) { maxDerivationNodes = v }(maxDerivationNodes)
	maxDerivationNodes = built / 3
	_, err = Derive(m)
	if err == nil {
		t.Fatalf("a derivation of %d nodes passed a budget of %d", built, maxDerivationNodes)
	}
	msg := err.Error()
	for _, want := range []string{"letchain.vi:13:3: the model is too large for vigen's derivative code", fmt.Sprintf("more than %d expression nodes", built/3), "hint:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q:\n%s", want, msg)
		}
	}
	if nodeLimit.Load() != 0 {
		t.Error("the budget is still open after the derivation stopped")
	}
}

// TestDerivationsWithinBudget: every example model derives (with its delta
// terms) in a tenth of the budget, so that the budget stops runaway
// derivations only.
func TestDerivationsWithinBudget(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*.vi"))
	if len(files) == 0 {
		t.Fatal("no example models")
	}
	var most int64
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := spec.Load(filepath.Base(f), src)
		if err != nil {
			t.Fatal(err)
		}
		before := nodesBuilt.Load()
		d, err := Derive(m)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range d.Objectives {
			o.TraceGrad()
		}
		n := nodesBuilt.Load() - before
		most = max(most, n)
		if n > maxDerivationNodes/10 {
			t.Errorf("%s built %d nodes, more than a tenth of the budget %d", f, n, maxDerivationNodes)
		}
	}
	t.Logf("the largest example derivation built %d nodes", most)
}
