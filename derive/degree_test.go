package derive

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// TestDegree: the structural degree of hand-built expressions in θ.
func TestDegree(t *testing.T) {
	a := Index{Name: "a", Size: "P"}
	n := Index{Name: "n", Size: "N", Plate: true}
	th := T("theta", IxE(a))
	x := T("x", IxE(n), IxE(a))
	dot := Sum([]Index{a}, Mul(x, th))
	for _, c := range []struct {
		name string
		e    Expr
		want int
	}{
		{"constant", Mul(N(3), T("y", IxE(n))), 0},
		{"linear", dot, 1},
		{"quadratic", Sum([]Index{n}, Pow(Sub(T("y", IxE(n)), dot), N(2))), 2},
		{"cubic", Mul(dot, dot, dot), 3},
		{"sum of degrees", Add(dot, Mul(dot, dot)), 2},
		{"primitive of data", Call1("exp", T("y", IxE(n))), 0},
		{"primitive of theta", Call1("logistic", dot), nonPolynomial},
		{"integer power", Pow(Add(dot, N(1)), N(4)), 4},
		{"negative power", Pow(Add(dot, N(2)), N(-1)), nonPolynomial},
		{"primitive times polynomial", Mul(Call1("exp", dot), dot), nonPolynomial},
		{"group", Call1("group", Mul(dot, dot)), 2},
	} {
		if got := Degree(c.e, "theta"); got != c.want {
			t.Errorf("%s: Degree(%s) = %d, want %d", c.name, String(c.e), got, c.want)
		}
	}
}

// TestDegreeBoundsDerivatives: over the objectives of every model of the
// derivative corpus, Degree bounds the symbolic derivatives: f differentiated
// Degree+1 times is 0 (checked up to degree 2, where expectations and
// conjugacy rely on it), and f of structural degree ≥ 1 reads θ.
func TestDegreeBoundsDerivatives(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.vi"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	checked := map[int]int{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m, err := spec.Load(filepath.Base(file), src)
		if err != nil {
			continue // the corpus holds models other stages refuse
		}
		d, err := Derive(m)
		if err != nil {
			continue
		}
		for _, o := range d.Objectives {
			v := o.Latent.Name
			for _, p := range o.Parts {
				deg := Degree(p.F, v)
				if deg > 0 && !DependsOn(p.F, v) {
					t.Errorf("%s: %s: degree %d but f does not read %s", file, v, deg, v)
				}
				if deg > 2 {
					continue
				}
				checked[deg]++
				e := p.F
				for k := 0; k <= deg; k++ {
					e = Diff(e, v, []Index{{Name: "dg" + string(rune('a'+k)), Size: o.Dim}})
				}
				if !isZero(e) {
					t.Errorf("%s: %s: Degree %d, but the derivative of order %d is %s", file, v, deg, deg+1, String(e))
				}
			}
		}
	}
	t.Logf("parts checked by degree: %v", checked)
	if checked[1]+checked[2] == 0 {
		t.Error("no part of degree 1 or 2 was checked")
	}
}
