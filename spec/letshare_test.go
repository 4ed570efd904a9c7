package spec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec/ir"
)

// TestLetChainIsShared: a let is one expression wherever it is read, so a
// chain of lets each reading the previous one twice loads as a graph as
// large as its source, not a tree of 2^links copies (a 20-link chain took
// the machine's 23 GB before), and a walk over it visits each node once.
func TestLetChainIsShared(t *testing.T) {
	const links = 14
	var b strings.Builder
	b.WriteString("model chain\nsize N, P\ndata x : real[N, P]\ndata y : real[N]\nlatent theta : real[P] nonconjugate laplace\ntheta ~ Normal(0, 1)\nfor n in 1:N {\n  let u0 = dot(x[n], theta)\n")
	for k := 1; k <= links; k++ {
		fmt.Fprintf(&b, "  let u%d = logistic(u%d) + 0.1 * u%d\n", k, k-1, k-1)
	}
	fmt.Fprintf(&b, "  y[n] ~ Normal(u%d, 1)\n}\n", links)
	m, err := Load("chain.vi", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	mean := m.Factors[len(m.Factors)-1].Args[0]
	nodes, visits := map[ir.Expr]bool{}, 0
	ir.Walk(mean, func(e ir.Expr) {
		nodes[e] = true
		visits++
	})
	// each link adds a Call, two Binaries, a Num and the reads: about 6
	if len(nodes) > 10*links {
		t.Errorf("the chain's mean is %d distinct nodes, want at most %d (a copy per use doubles it at each link)", len(nodes), 10*links)
	}
	if visits > 2*len(nodes) {
		t.Errorf("ir.Walk made %d visits over %d nodes: it walks the tree, not the graph", visits, len(nodes))
	}
	// the two reads of u13 in u14 are the one expression
	bin, ok := mean.(*ir.Binary)
	if !ok {
		t.Fatalf("u%d is %T, want a sum", links, mean)
	}
	call, ok := bin.X.(*ir.Call)
	scaled, ok2 := bin.Y.(*ir.Binary)
	if !ok || !ok2 || call.Args[0] != scaled.Y {
		t.Errorf("u%d's two reads of u%d are not the same expression: %s", links, links-1, mean)
	}
}
