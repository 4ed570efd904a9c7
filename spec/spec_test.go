package spec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec/ir"
)

func loadFile(t *testing.T, path string) (*ir.Model, error) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Load(path, src)
}

func mustLoad(t *testing.T, name string) *ir.Model {
	t.Helper()
	m, err := loadFile(t, filepath.Join("testdata", "good", name+".vi"))
	if err != nil {
		t.Fatalf("%s: unexpected error:\n%v", name, err)
	}
	return m
}

// TestGoodModels checks that every example model parses and checks.
func TestGoodModels(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "good", "*.vi"))
	if err != nil || len(files) < 5 {
		t.Fatalf("want the five example models, got %v (%v)", files, err)
	}
	for _, f := range files {
		m, err := loadFile(t, f)
		if err != nil {
			t.Errorf("%s:\n%v", f, err)
			continue
		}
		if m.File != filepath.Base(f) {
			t.Errorf("%s: File = %q, want %q", f, m.File, filepath.Base(f))
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".vi"); m.Name != want {
			t.Errorf("%s: Name = %q, want %q", f, m.Name, want)
		}
		checkInvariants(t, m)
	}
}

// checkInvariants checks properties every checked model has.
func checkInvariants(t *testing.T, m *ir.Model) {
	t.Helper()
	sizes := true
	for _, v := range m.Vars {
		if v.Role != ir.RoleSize {
			sizes = false
		} else if !sizes {
			t.Errorf("%s: size %s declared after a non-size in Vars", m.Name, v.Name)
		}
		if m.Lookup(v.Name) != v {
			t.Errorf("%s: Lookup(%s) is not the var", m.Name, v.Name)
		}
		if v.Pos.File != m.File || v.Pos.Line == 0 {
			t.Errorf("%s: var %s has position %v", m.Name, v.Name, v.Pos)
		}
	}
	termRead := map[string]bool{} // latents whose density comes from factor statements
	for _, f := range m.Factors {
		if f.IsTerm() {
			ir.Walk(f.Args[0], func(e ir.Expr) {
				if r, ok := e.(*ir.Ref); ok {
					termRead[r.Var.Name] = true
				}
			})
		}
	}
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		if m.Prior(v.Name) == nil && !termRead[v.Name] && (!v.Treatment.Nonconjugate() || len(m.Children(v.Name)) == 0) {
			// a nonconjugate latent read by statements may have an improper flat prior
			t.Errorf("%s: latent %s has no prior, and is not a nonconjugate latent read by statements", m.Name, v.Name)
		}
		if v.Treatment == ir.NoTreatment {
			t.Errorf("%s: latent %s has no treatment", m.Name, v.Name)
		}
	}
	for _, f := range m.Factors {
		exprs := f.Args
		switch {
		case f.IsTerm():
			if f.Dist != "" || len(f.Args) != 1 || f.Args[0].Typ().Rank() != 0 {
				t.Errorf("%s: factor statement at %v has dist %q and args %v", m.Name, f.Pos, f.Dist, f.Args)
			}
		case ir.Families[f.Dist] == nil || !ir.Families[f.Dist].Variadic && len(f.Args) != len(ir.Families[f.Dist].Params) ||
			ir.Families[f.Dist].Variadic && len(f.Args) <= len(ir.Families[f.Dist].Params):
			t.Errorf("%s: factor %s at %v has bad dist or args", m.Name, f.Dist, f.Pos)
		default:
			exprs = append([]ir.Expr{f.Target}, f.Args...)
		}
		for _, a := range exprs {
			ir.Walk(a, func(e ir.Expr) {
				if r, ok := e.(*ir.Ref); ok && (r.Var == nil || m.Lookup(r.Var.Name) != r.Var) {
					t.Errorf("%s: unresolved ref at %v", m.Name, r.Pos)
				}
				if e.Position().File != m.File {
					t.Errorf("%s: expression at %v has the wrong file", m.Name, e.Position())
				}
			})
		}
	}
}

func TestLogreg(t *testing.T) {
	m := mustLoad(t, "logreg")
	if len(m.Factors) != 2 {
		t.Fatalf("got %d factors, want 2", len(m.Factors))
	}
	prior, lik := m.Factors[0], m.Factors[1]
	if prior.Dist != "MvNormal" || prior.Target.Var.Name != "theta" || len(prior.Plates) != 0 {
		t.Errorf("first factor: %s ~ %s with %d plates", prior.Target.Var.Name, prior.Dist, len(prior.Plates))
	}
	if len(lik.Plates) != 1 || lik.Plates[0].Index != "n" || lik.Plates[0].Size != "N" {
		t.Errorf("second factor plates = %+v, want one plate n over N", lik.Plates)
	}
	if got := exprString(lik.Target); got != "y[n]" {
		t.Errorf("second factor target = %s, want y[n]", got)
	}
	if ix, ok := lik.Target.Index[0].(*ir.Index); !ok || ix.Size != "N" {
		t.Errorf("target index = %#v, want an Index over N", lik.Target.Index[0])
	}
	if got := lik.Target.T.String(); got != "int in 0..1" {
		t.Errorf("y[n] has type %s", got)
	}
	if ch := m.Children("theta"); len(ch) != 1 || ch[0] != lik {
		t.Errorf("Children(theta) = %v, want the Bernoulli factor", ch)
	}
	if m.Prior("theta") != prior {
		t.Errorf("Prior(theta) is not the MvNormal factor")
	}
	theta := m.Lookup("theta")
	if theta.Role != ir.RoleLatent || theta.Treatment != ir.Laplace || theta.Type.String() != "real[P]" {
		t.Errorf("theta = %+v", theta)
	}
	sigma := m.Lookup("Sigma0")
	if got := sigma.Type; got.Class != ir.Cov || len(got.Dims) != 2 || got.Dims[0] != "P" || got.Dims[1] != "P" {
		t.Errorf("Sigma0 has type %+v, want cov[P] with Dims [P P]", got)
	}
	if c, ok := sigma.Default.(*ir.Call); !ok || c.Func != "eye" || c.T.Class != ir.Cov {
		t.Errorf("Sigma0 default = %#v", sigma.Default)
	}
	if got := ir.SortedNames(m.VarsWithRole(ir.RoleSize)); strings.Join(got, ",") != "N,P" {
		t.Errorf("sizes = %v", got)
	}
	// The argument of the Bernoulli: logistic(dot(x[n], theta)).
	call := lik.Args[0].(*ir.Call)
	dot := call.Args[0].(*ir.Call)
	xn := dot.Args[0].(*ir.Ref)
	if xn.T.String() != "real[P]" || call.T.String() != "real" {
		t.Errorf("x[n] : %s, logistic(...) : %s", xn.T, call.T)
	}
	if lik.Pos.String() != "logreg.vi:13:3" {
		t.Errorf("likelihood at %v", lik.Pos)
	}
}

func TestHierLogreg(t *testing.T) {
	m := mustLoad(t, "hierlogreg")
	if len(m.Factors) != 4 {
		t.Fatalf("got %d factors, want 4", len(m.Factors))
	}
	if m.Lookup("Lambda0").Role != ir.RoleParam || m.Prior("Lambda0").Dist != "Wishart" {
		t.Errorf("Lambda0 should be a param with a Wishart prior")
	}
	lik := m.Factors[3]
	if got := exprString(lik.Args[0]); got != "logistic(dot(x[n], theta[group[n]]))" {
		t.Errorf("likelihood argument = %s", got)
	}
	if ch := m.Children("theta"); len(ch) != 1 || ch[0] != lik {
		t.Errorf("Children(theta) = %d factors", len(ch))
	}
	if ch := m.Children("Lambda0"); len(ch) != 1 || ch[0].Target.Var.Name != "theta" {
		t.Errorf("Children(Lambda0) wrong")
	}
	if d := exprString(m.Lookup("nu").Default); d != "P + 100" {
		t.Errorf("nu default = %s", d)
	}
}

func TestCTM(t *testing.T) {
	m := mustLoad(t, "ctm")
	if len(m.Factors) != 3 {
		t.Fatalf("got %d factors, want 3", len(m.Factors))
	}
	w := m.Lookup("w")
	if w.Type.Class != ir.Bag || w.Type.Kind != ir.Int || w.Type.String() != "bag[D] of 1..V" {
		t.Errorf("w : %+v", w.Type)
	}
	z := m.Lookup("z")
	if strings.Join(z.Type.Dims, ",") != "D,w" || z.Treatment != ir.Conjugate {
		t.Errorf("z : %+v", z)
	}
	f := m.Factors[2]
	if len(f.Plates) != 2 || f.Plates[1].Size != "" || f.Plates[1].Bag == nil || exprString(f.Plates[1].Bag) != "w[d]" {
		t.Fatalf("plates = %+v", f.Plates)
	}
	if ix := f.Target.Index[1].(*ir.Index); ix.Size != "" || ix.Name != "n" {
		t.Errorf("token index = %+v", ix)
	}
	if got := f.Args[0].Typ().String(); got != "simplex[V]" {
		t.Errorf("beta[z[d, n]] : %s", got)
	}
	if got := m.Factors[1].Args[0].Typ().String(); got != "simplex[K]" {
		t.Errorf("softmax(theta[d]) : %s", got)
	}
}

func TestLDA(t *testing.T) {
	m := mustLoad(t, "lda")
	if len(m.Factors) != 4 {
		t.Fatalf("got %d factors, want 4", len(m.Factors))
	}
	if got := m.Factors[0].Target.T.String(); got != "simplex[V]" {
		t.Errorf("beta[k] : %s", got)
	}
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		if v.Treatment != ir.Conjugate {
			t.Errorf("%s is not conjugate", v.Name)
		}
	}
}

func TestHLM(t *testing.T) {
	m := mustLoad(t, "hlm")
	f := m.Factors[2]
	if f.Dist != "Multinomial" || f.Target.T.String() != "int[V]" {
		t.Errorf("x[d] ~ %s, x[d] : %s", f.Dist, f.Target.T)
	}
	if got := m.Factors[1].Args[0].Typ().String(); got != "real[V]" {
		t.Errorf("exp(theta) : %s", got)
	}
}

// TestBad compares the errors for each testdata/bad/NAME.vi with
// NAME.stderr, which holds what `vigen check` prints (rewrite them with
// `go test ./cmd/vigen -run TestBadModels -update`). Models named conj_*,
// derive_* or codegen_* are well formed, and their errors are derive's or
// the code generator's: the checker must accept them.
func TestBad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.vi"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad models: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".vi")
		t.Run(name, func(t *testing.T) {
			_, err := loadFile(t, f)
			if strings.HasPrefix(name, "conj_") || strings.HasPrefix(name, "derive_") || strings.HasPrefix(name, "codegen_") {
				if err != nil {
					t.Fatalf("the checker rejects a model whose errors should be derive's:\n%v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if _, ok := err.(ErrorList); !ok {
				t.Errorf("error is %T, want ErrorList", err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(f, ".vi") + ".stderr"
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/vigen -run TestBadModels -update)", err)
			}
			if got != string(want) {
				t.Errorf("errors differ from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	l := ErrorList{
		{Pos: ir.Pos{File: "a.vi", Line: 3, Col: 1}, Msg: "third"},
		{Pos: ir.Pos{File: "a.vi", Line: 1, Col: 9}, Msg: "second", Hint: "fix it"},
		{Pos: ir.Pos{File: "a.vi", Line: 1, Col: 2}, Msg: "first"},
		{Pos: ir.Pos{File: "a.vi", Line: 3, Col: 1}, Msg: "third"},
	}
	l.Sort()
	want := "a.vi:1:2: first\na.vi:1:9: second\n\thint: fix it\na.vi:3:1: third"
	if got := l.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if ErrorList(nil).Err() != nil {
		t.Error("empty list is an error")
	}
}

func TestParsePositions(t *testing.T) {
	f, err := Parse("dir/x.vi", []byte("model x\nsize N\ndata y : real[N]\nfor n in 1:N {\n  y[n] ~ Normal(-2^2 * 3, 1)\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Name.Name != "x" || len(f.Decls) != 2 || len(f.Stmts) != 1 {
		t.Fatalf("file = %+v", f)
	}
	loop := f.Stmts[0].(*ForStmt)
	st := loop.Body[0].(*TildeStmt)
	if p := st.Position(); p.Filename != "x.vi" || p.Line != 5 || p.Column != 3 {
		t.Errorf("statement at %v", p)
	}
	if st.Tilde.Column != 8 {
		t.Errorf("~ at %v", st.Tilde)
	}
	// -2^2 * 3 parses as (-(2^2)) * 3.
	mul := st.Args[0].(*BinaryExpr)
	neg, ok := mul.X.(*UnaryExpr)
	if mul.Op != '*' || !ok {
		t.Fatalf("mean = %#v", st.Args[0])
	}
	if pow, ok := neg.X.(*BinaryExpr); !ok || pow.Op != '^' || pow.Pos.Column != 19 {
		t.Errorf("-2^2 = %#v", neg.X)
	}
}

func TestPrecedence(t *testing.T) {
	src := "model p\nsize N\ndata y : real[N]\nconst a : real = 1\nconst b : real = 2\nconst c : real = 3\n" +
		"y ~ Normal(a - b - c + a * b / c ^ a ^ b, -a ^ 2)\n"
	m, err := Load("p.vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	mean, sd := m.Factors[0].Args[0], m.Factors[0].Args[1]
	if got := exprString(mean); got != "((a - b) - c) + ((a * b) / (c ^ (a ^ b)))" {
		t.Errorf("mean = %s", got)
	}
	if got := exprString(sd); got != "-(a ^ 2)" {
		t.Errorf("sd = %s", got)
	}
}

// TestReadmeCoversTables checks that the language reference documents
// every distribution and function of the signature tables.
func TestReadmeCoversTables(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range ir.Families {
		if !strings.Contains(string(readme), "| `"+name+"` |") {
			t.Errorf("README.md has no table row for distribution %s", name)
		}
	}
	for name := range ir.Funcs {
		if !strings.Contains(string(readme), "| `"+name+"(") {
			t.Errorf("README.md has no table row for function %s", name)
		}
	}
	for _, dir := range []string{"good"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.vi"))
		for _, f := range files {
			if !strings.Contains(string(readme), "`"+filepath.Base(f)+"`") {
				t.Errorf("README.md does not show example %s", f)
			}
		}
	}
}

// A literal dimension is an implicit size named by its number, fixed at
// that number and shared by every type that writes it; a size default is
// kept on the size. Types print as written.
func TestLiteralSizes(t *testing.T) {
	m := mustLoad(t, "literalsizes")
	var names []string
	for _, v := range m.Vars {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, ","); got != "N,J,2,x,y,g,beta,c,u" {
		t.Errorf("Vars = %s, want the declared sizes, then the literal 2, then the rest", got)
	}
	two := m.Lookup("2")
	if two == nil || two.Role != ir.RoleSize || !two.Fixed || two.SizeDefault != 2 {
		t.Fatalf("size 2 = %+v, want a fixed size of value 2", two)
	}
	if j := m.Lookup("J"); j.Fixed || j.SizeDefault != 4 {
		t.Errorf("J = %+v, want a size with default 4", j)
	}
	if n := m.Lookup("N"); n.Fixed || n.SizeDefault != 0 {
		t.Errorf("N = %+v, want a size without default", n)
	}
	for name, want := range map[string]string{"x": "real[N, 2]", "beta": "real[2]", "c": "ordered[2]", "u": "real[J]"} {
		if got := m.Lookup(name).TypeString(); got != want {
			t.Errorf("%s : %s, want %s", name, got, want)
		}
	}
	if d := m.Lookup("c").Type.Dims; len(d) != 1 || d[0] != "2" {
		t.Errorf("c's Dims = %v, want [2]", d)
	}

	// Several literals, a loop over one, and a literal index within it.
	src := `model m
size N
data y : real[N, 3]
data z : simplex[2]
latent s : real<lower=0>[3] nonconjugate laplace
latent a : positive_ordered[3] nonconjugate laplace
latent mu : real[2] nonconjugate laplace
a ~ Normal(0, 1)
s ~ HalfNormal(1)
for k in 1:2 {
  mu[k] ~ Normal(0, 1)
}
for n in 1:N {
  y[n] ~ Normal(mu[2] + a + z[1], s)
}
`
	m, err := Load("m.vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, v := range m.VarsWithRole(ir.RoleSize) {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, ","); got != "N,2,3" {
		t.Errorf("sizes = %s, want N,2,3 (literals smallest first)", got)
	}
	if p := m.Prior("mu"); p == nil || len(p.Plates) != 1 || p.Plates[0].Size != "2" {
		t.Errorf("mu's prior = %+v, want one plate over the literal 2", p)
	}
	for name, want := range map[string]string{"y": "real[N, 3]", "z": "simplex[2]", "s": "real<lower=0>[3]", "a": "positive_ordered[3]"} {
		if got := m.Lookup(name).TypeString(); got != want {
			t.Errorf("%s : %s, want %s", name, got, want)
		}
	}
	// real[2] and real[K] are different sizes, even with K = 2 by default
	_, err = Load("m.vi", []byte("model m\nsize K = 2\ndata y : real[K]\nlatent mu : real[2] nonconjugate laplace\nmu ~ Normal(0, 1)\ny ~ MvNormal(mu, eye(K))\n"))
	if err == nil || !strings.Contains(err.Error(), "m.vi:6:") {
		t.Errorf("MvNormal of a real[2] mean over a real[K] target: error %v, want one at line 6", err)
	}
}

// The literal end of a range that a Categorical's 1..K takes, the 3 of
// `y : int[N] in 1..3`, is the fixed size 3, as the 3 of real[3] is: the
// softmax of a vector literal [0, ·, 1] meets it and is a simplex[3]. Before,
// the letter K was bound to the name "3" of a size no declaration made, and
// code generation failed with "unknown size 3".
func TestLiteralRangeIsASize(t *testing.T) {
	for _, c := range []struct{ src, size string }{
		{"data y : int[N] in 1..3\nlatent w : real nonconjugate laplace\nw ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Categorical(softmax([0, x[n] * w, 1]))\n}\n", "3"},
		{"data y : int[N] in 1..2\nlatent w : real nonconjugate laplace\nw ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Categorical(softmax([0, x[n] * w]))\n}\n", "2"},
		{"data y : int[N] in 1..3\nlatent b : real[2] nonconjugate laplace\nb ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Categorical(softmax(append(b, x[n])))\n}\n", "3"},
		{"data y : real[N]\nlatent z : int[N] in 1..2 conjugate\nlatent m : real conjugate\nm ~ Normal(0, 1)\nfor n in 1:N {\n  z[n] ~ Categorical(softmax([0, 1]))\n  y[n] ~ Normal(m * z[n] + x[n], 1)\n}\n", "2"},
	} {
		src := "model m\nsize N\ndata x : real[N]\n" + c.src
		m, err := Load("m.vi", []byte(src))
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if s := m.Lookup(c.size); s == nil || s.Role != ir.RoleSize || !s.Fixed || strconv.Itoa(s.SizeDefault) != c.size {
			t.Errorf("%s: size %s = %+v, want the fixed size %s", src, c.size, s, c.size)
		}
		for _, f := range m.Factors {
			if f.Dist != "Categorical" {
				continue
			}
			if d := f.Args[0].Typ().Dims; len(d) != 1 || d[0] != c.size {
				t.Errorf("%s: the probabilities' dimensions are %v, want [%s]", src, d, c.size)
			}
		}
	}
}
