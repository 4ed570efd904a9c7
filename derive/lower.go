package derive

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// Builder turns checked model expressions (spec/ir, vector-valued) into
// scalar index-notation expressions. It hands out fresh index names and
// records auxiliary tensors (inverses and log-determinants of covariance
// inputs) that generated code computes once their inputs are known.
type Builder struct {
	Model *ir.Model
	// at is the statement being derived (FactorLogDensity), where a
	// derivation past its node budget is reported.
	at   ir.Pos
	used map[string]bool
	// fresh is, per base name, the suffix Fresh tries first: every name
	// before it is used, and names are never released.
	fresh  map[string]int
	Aux    []Aux
	auxBy  map[string]bool
	plates map[string]Index // the plate indices in scope, by name
	unit   *Index           // while building a per-unit objective: the unit's plate, left unsummed
	group  *Grouping        // while building a grouped statement (group.go) for unit
	// rows are the factors of per-unit Gaussian latents read as a whole
	// (rowsQ), by latent.
	rows map[string]*QFactor
	// perEntry drops the count weights of bag plates: the update of a
	// latent with one value per (term, count) entry is per token.
	perEntry bool
	positive map[string]bool // positiveLatents, computed once
	// raw reads transformed latents on their unconstrained scale
	// (transform.go), for their log-Jacobians.
	raw bool
	// pointwise leaves every plate of a statement, and the elements of
	// an elementwise array target, unsummed: one log density per
	// observation (pointwise.go), its free indices in free.
	pointwise bool
	free      []Index
}

// Aux is a derived tensor computed from a variable before it is used: the
// inverse or the log-determinant of a covariance matrix.
type Aux struct {
	Name string // tensor name used in expressions, e.g. "Sigma0.inv"
	Op   string // "inv" or "logdet"
	Arg  string // the variable it is computed from
	Dim  string // matrix order (a size name)
}

// NewBuilder returns a builder for m; index names used by m's plates are
// never handed out as fresh names.
func NewBuilder(m *ir.Model) *Builder {
	b := &Builder{Model: m, used: map[string]bool{}, auxBy: map[string]bool{}, plates: map[string]Index{}}
	for _, f := range m.Factors {
		for _, p := range f.Plates {
			b.used[p.Index] = true
		}
	}
	return b
}

// Fresh returns an index over size with a name not used before, drawn from
// base, base2, base3, ...
func (b *Builder) Fresh(base, size string) Index {
	if b.fresh == nil {
		b.fresh = map[string]int{}
	}
	n := b.fresh[base] // 0 for base itself, then 2, 3, ...
	name := base
	if n > 0 {
		name = base + strconv.Itoa(n)
	}
	for b.used[name] {
		if n == 0 {
			n = 2
		} else {
			n++
		}
		name = base + strconv.Itoa(n)
	}
	b.fresh[base] = n
	b.used[name] = true
	return Index{Name: name, Size: size}
}

func (b *Builder) freshFor(size string) Index {
	return b.Fresh("i", size)
}

func (b *Builder) aux(op, arg, dim string) string {
	name := arg + "." + op
	if !b.auxBy[name] {
		b.auxBy[name] = true
		b.Aux = append(b.Aux, Aux{Name: name, Op: op, Arg: arg, Dim: dim})
	}
	return name
}

// Val is a vector-valued quantity seen through its elements: At(sel) is the
// element selected by one index expression per dimension.
type Val struct {
	Dims   []string
	At     func(sel []Expr) Expr
	Src    ir.Expr // the model expression it came from (for positions), or nil
	Tensor string  // the tensor it reads whole, if it is exactly one (for inverses and log-determinants)
	// Dist is set for a distribution argument (a component of a Mixture,
	// an *ir.DistArg), which has no elements: its family and arguments.
	Dist *DistVal
}

// DistVal is a distribution given as an argument: a family of the table
// and its arguments, whose target is the enclosing statement's.
type DistVal struct {
	Name string
	Args []Val
}

// Scalar is the element of a rank-0 value.
func (v Val) Scalar() Expr { return v.At(nil) }

// ValOf wraps a model expression.
func (b *Builder) ValOf(e ir.Expr) Val {
	if d, ok := e.(*ir.DistArg); ok {
		dv := &DistVal{Name: d.Dist}
		for _, a := range d.Args {
			dv.Args = append(dv.Args, b.ValOf(a))
		}
		return Val{Dims: d.T.Dims, Src: e, Dist: dv, At: func([]Expr) Expr {
			panic(lowerError{ir.Errorf(d.Pos, "internal error in vigen: the distribution %s read as a value (please report it with the model)", d.Dist)})
		}}
	}
	tensor := ""
	if r, ok := e.(*ir.Ref); ok && len(r.Index) == 0 && r.Var.Role != ir.RoleSize && !Transformed(r.Var) {
		tensor = r.Var.Name
	}
	return Val{Dims: e.Typ().Dims, Src: e, Tensor: tensor, At: func(sel []Expr) Expr {
		x, err := b.Lower(e, sel)
		if err != nil {
			panic(lowerError{err})
		}
		return x
	}}
}

type lowerError struct{ err error }

// recoverLowerError, deferred by a function with results (v, err), turns a
// lowerError panic (how ValOf's At reports an expression it cannot lower)
// into the results (zero, the error); any other panic goes on.
func recoverLowerError[T any](v *T, err *error) {
	if r := recover(); r != nil {
		le, ok := r.(lowerError)
		if !ok {
			panic(r)
		}
		var zero T
		*v, *err = zero, le.err
	}
}

// Lower returns the element sel of the model expression e. len(sel) must
// equal e's rank; scalar operands broadcast.
func (b *Builder) Lower(e ir.Expr, sel []Expr) (Expr, error) {
	if len(e.Typ().Dims) == 0 {
		sel = nil // a scalar where an array is expected: the same at every element
	}
	if len(sel) != len(e.Typ().Dims) {
		return nil, ir.Errorf(e.Position(), "internal error in vigen: %d indices for a rank-%d expression (please report it with the model)", len(sel), len(e.Typ().Dims))
	}
	switch e := e.(type) {
	case *ir.Num:
		return N(e.Value), nil
	case *ir.Index:
		return nil, ir.Errorf(e.Pos, "using the index %s as a number is not supported yet", e.Name).Hintf("pass the number as data, e.g. `data t : real[N]` read as t[n]")
	case *ir.Ref:
		v := e.Var
		if v.Role == ir.RoleSize {
			return SizeE(v.Name), nil
		}
		if ScalarGaussian(v) {
			// a scalar latent's Gaussian factor is over a 1-vector
			i := b.freshFor(ScalarSize)
			u := Sum([]Index{i}, T(v.Name, IxE(i)))
			if Transformed(v) && !b.raw {
				return b.constrain(v, u)
			}
			return u, nil
		}
		if v.Type.Class == ir.Bag {
			// w[d, n] inside `for n in w[d]`: the term id of entry n, read by
			// its flat position in the bag.
			if len(e.Index) != 2 || len(sel) != 0 {
				return nil, ir.Errorf(e.Pos, "a bag is read as %s[d, n] inside `for n in %s[d]`", v.Name, v.Name).Hintf("loop over the document's tokens and read one term id at a time")
			}
			n, ok := e.Index[1].(*ir.Index)
			if !ok {
				return nil, ir.Errorf(e.Pos, "a bag is read as %s[d, n] inside `for n in %s[d]`", v.Name, v.Name).Hintf("loop over the document's tokens and read one term id at a time")
			}
			return TInt(v.Name+".term", IxE(b.indexFor(n))), nil
		}
		refIndex := e.Index
		if k := bagDim(b.Model, v); k > 0 && len(refIndex) > k {
			// r[d, n] for r : real[D, w]: per-entry data is stored flat,
			// aligned with the bag's entries, so only n indexes it.
			refIndex = refIndex[k:]
		}
		var idx []Expr
		var offs []int // y[t-1]: a shifted read (ShiftedName)
		fitted := v.Role == ir.RoleLatent || v.Role == ir.RoleParam
		for k, x := range refIndex {
			if ix, ok := b.groupedIndex(x); ok {
				idx = append(idx, ix)
				continue
			}
			switch x := x.(type) {
			case *ir.Offset:
				if fitted && !chainable(v) {
					return nil, ir.Errorf(x.Pos, "reading the %s %s at an offset (%s) is not supported: vigen derives offset reads of nonconjugate latent vectors only", v.Role, v.Name, x).Hintf("time chains such as x[t] ~ Normal(x[t-1], q) need x declared `latent x : real[T] nonconjugate laplace`; offsets may also read data and consts")
				}
				if fitted {
					// x[t-1] of a latent: the element at the shifted index,
					// whose derivative is δ(t-1, a) (Shift)
					idx = append(idx, ShiftE(b.indexFor(x.Index), x.Off))
					continue
				}
				if offs == nil {
					offs = make([]int, len(refIndex))
				}
				offs[k] = x.Off
				idx = append(idx, IxE(b.indexFor(x.Index)))
			case *ir.Index:
				i := b.indexFor(x)
				if _, _, _, ranged := SizeRange(i.Size); ranged && fitted && !chainable(v) {
					hint := fmt.Sprintf("declare %s `nonconjugate laplace`, or loop over the whole dimension (1:%s) where it is read at the loop index", v.Name, x.Size)
					if v.Treatment.Nonconjugate() {
						hint = fmt.Sprintf("loop over the whole dimension (1:%s) where %s is read at the loop index", x.Size, v.Name)
					}
					return nil, ir.Errorf(x.Pos, "reading the %s %s inside a loop over part of its dimension (%s) is not supported: vigen derives such reads of nonconjugate latent vectors (real[T]) only", v.Role, v.Name, x.Name).Hintf("%s", hint)
				}
				idx = append(idx, IxE(i))
			default:
				ix, err := b.Lower(x, nil)
				if err != nil {
					return nil, err
				}
				idx = append(idx, ix)
			}
		}
		idx = append(idx, sel...)
		if offs != nil {
			return newTensor(ShiftedName(v.Name, offs), idx, false, v.Type.Kind == ir.Int), nil
		}
		if v.Type.Class == ir.Cov && len(idx) == 2 {
			return newTensor(v.Name, idx, true, false), nil
		}
		t := newTensor(v.Name, idx, false, v.Type.Kind == ir.Int)
		if Transformed(v) && !b.raw {
			return b.constrain(v, t)
		}
		return t, nil
	case *ir.Unary:
		x, err := b.Lower(e.X, sel)
		if err != nil {
			return nil, err
		}
		return Neg(x), nil
	case *ir.Binary:
		if e.Op == ir.OpMatMul {
			return b.matMul(e, sel)
		}
		x, err := b.Lower(e.X, broadcast(e.X, sel))
		if err != nil {
			return nil, err
		}
		y, err := b.Lower(e.Y, broadcast(e.Y, sel))
		if err != nil {
			return nil, err
		}
		var r Expr
		switch e.Op {
		case '+':
			r = Add(x, y)
		case '-':
			r = Sub(x, y)
		case '*':
			r = Mul(x, y)
		case '/':
			if n, ok := y.(*Num); ok && n.V == 0 {
				return nil, ir.Errorf(e.Pos, "division by zero").Hintf("divide by a non-zero constant or a positive variable")
			}
			r = Div(x, y)
		case '^':
			r = Pow(x, y)
		default:
			return nil, ir.Errorf(e.Pos, "internal error in vigen: unknown operator %c (please report it with the model)", e.Op)
		}
		if v, ok := outOfRange(x, y, r, e.Op == '*' || e.Op == '/'); ok {
			return nil, ir.Errorf(e.Pos, "the numbers of this expression combine to %g, outside the range of float64 (non-zero magnitudes from 4.9e-324 to 1.8e308)", v).Hintf("vigen multiplies and adds the numbers of an expression before the fit; rescale them (the data in other units, a parameter on another scale)")
		}
		return r, nil
	case *ir.DistArg:
		return nil, ir.Errorf(e.Pos, "the distribution %s is an argument of a distribution, not a value", e.Dist).Hintf("distributions are written on the right of ~, and as the components of a Mixture")
	case *ir.Call:
		fn, ok := funcs[e.Func]
		if !ok {
			return nil, ir.Errorf(e.Pos, "%s is not supported by derive yet", e.Func).Hintf("spec/README.md lists what each function supports")
		}
		return fn(b, e, sel)
	}
	return nil, ir.Errorf(e.Position(), "internal error in vigen: cannot lower %T (please report it with the model)", e)
}

// outOfRange reports whether combining x and y into r folded their numbers
// out of float64's range, and to what: a number of r (its coefficient, or
// a term's) that is infinite or NaN, or, for a product (product), a zero
// coefficient from non-zero ones (an underflow that would drop the term).
func outOfRange(x, y, r Expr, product bool) (float64, bool) {
	terms := []Expr{r}
	if a, ok := r.(*AddNode); ok {
		terms = a.Terms
	}
	for _, t := range terms {
		if c, _ := coefRest(t); math.IsInf(c, 0) || math.IsNaN(c) {
			return c, true
		}
	}
	cx, _ := coefRest(x)
	cy, _ := coefRest(y)
	if n, ok := r.(*Num); ok && product && n.V == 0 && cx != 0 && cy != 0 {
		return 0, true
	}
	return 0, false
}

// chainable reports whether v is a latent whose reads at shifted indices
// and in loops over part of its dimension derive exactly: a nonconjugate
// vector with one Gaussian factor, differentiated element by element.
func chainable(v *ir.Var) bool {
	return v.Role == ir.RoleLatent && v.Treatment.Nonconjugate() && len(v.Type.Dims) == 1 && v.Type.Class == ir.Plain
}

// ShiftedName is the name of the tensor a read of v at shifted indices
// (y[t-1], x[t+2, p]) is lowered to: to derive a tensor of its own, read by
// generated code from v's array with offs added to the first indices.
func ShiftedName(v string, offs []int) string {
	parts := make([]string, len(offs))
	for k, o := range offs {
		parts[k] = strconv.Itoa(o)
	}
	return v + "~" + strings.Join(parts, ",")
}

// Shifted splits a ShiftedName into the variable and the offsets of its
// first indices.
func Shifted(name string) (v string, offs []int, ok bool) {
	v, rest, ok := strings.Cut(name, "~")
	if !ok {
		return name, nil, false
	}
	for _, p := range strings.Split(rest, ",") {
		o, err := strconv.Atoi(p)
		if err != nil {
			return name, nil, false
		}
		offs = append(offs, o)
	}
	return v, offs, true
}

// RangedSize is the Size of a plate index over part of size: its values
// (0-based) run from lo to size+hi−1, for a loop `for t in lo+1:size+hi`.
func RangedSize(size string, lo, hi int) string {
	if lo == 0 && hi == 0 {
		return size
	}
	return fmt.Sprintf("%s~%d~%d", size, lo, hi)
}

// SizeRange splits a RangedSize.
func SizeRange(s string) (size string, lo, hi int, ok bool) {
	parts := strings.Split(s, "~")
	if len(parts) != 3 {
		return s, 0, 0, false
	}
	l, err1 := strconv.Atoi(parts[1])
	h, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return s, 0, 0, false
	}
	return parts[0], l, h, true
}

// bagDim returns the position of v's dimension that names a bag (one entry
// per token of each document), or 0 if there is none.
func bagDim(m *ir.Model, v *ir.Var) int {
	for k, d := range v.Type.Dims {
		if k > 0 {
			if bv := m.Lookup(d); bv != nil && bv.Type.Class == ir.Bag {
				return k
			}
		}
	}
	return 0
}

// BagDim is bagDim for codegen.
func BagDim(m *ir.Model, v *ir.Var) int { return bagDim(m, v) }

// indexFor returns the derive index of a plate's loop variable.
func (b *Builder) indexFor(x *ir.Index) Index {
	if i, ok := b.plates[x.Name]; ok {
		return i
	}
	return Index{Name: x.Name, Size: x.Size}
}

// broadcast returns the trailing part of sel that indexes e.
func broadcast(e ir.Expr, sel []Expr) []Expr {
	r := len(e.Typ().Dims)
	if r > len(sel) {
		r = len(sel)
	}
	return sel[len(sel)-r:]
}

// funcs lowers each built-in function of the language (ir.Funcs) to index
// notation: elementwise functions map to a primitive, reductions to Sums.
var funcs = map[string]func(b *Builder, e *ir.Call, sel []Expr) (Expr, error){}

func init() {
	for _, name := range []string{"exp", "log", "log1p", "expm1", "sqrt", "logistic", "softplus", "lgamma", "digamma", "trigamma", "Phi"} {
		p := MustPrim(name)
		funcs[name] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
			x, err := b.Lower(e.Args[0], broadcast(e.Args[0], sel))
			if err != nil {
				return nil, err
			}
			if n, ok := x.(*Num); ok {
				if v := p.Eval([]float64{n.V}); math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, ir.Errorf(e.Pos, "%s(%s) is outside the domain of %s (%s)", p.Name, fmtNum(n.V), p.Name, p.Domain).Hintf("check the sign of the constant")
				}
			}
			return CallE(p, x), nil
		}
	}
	funcs["dot"] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
		i := b.freshFor(e.Args[0].Typ().Dims[0])
		x, err := b.Lower(e.Args[0], []Expr{IxE(i)})
		if err != nil {
			return nil, err
		}
		y, err := b.Lower(e.Args[1], []Expr{IxE(i)})
		if err != nil {
			return nil, err
		}
		return Sum([]Index{i}, Mul(x, y)), nil
	}
	funcs["sum"] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
		i := b.freshFor(e.Args[0].Typ().Dims[0])
		x, err := b.Lower(e.Args[0], []Expr{IxE(i)})
		if err != nil {
			return nil, err
		}
		return Sum([]Index{i}, x), nil
	}
	// loglogistic(x) = log σ(x) = −softplus(−x), stable for any x
	funcs["loglogistic"] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
		x, err := b.Lower(e.Args[0], broadcast(e.Args[0], sel))
		if err != nil {
			return nil, err
		}
		return Neg(Call1("softplus", Neg(x))), nil
	}
	// logsumexp(x) = M + log Σ_i exp(x_i − M), M = max_i x_i (stable)
	funcs["logsumexp"] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
		return b.logSumExp(e.Args[0])
	}
	// softmax(x)_k = exp(x_k − logsumexp(x))
	funcs["softmax"] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
		lse, err := b.logSumExp(e.Args[0])
		if err != nil {
			return nil, err
		}
		xk, err := b.Lower(e.Args[0], sel)
		if err != nil {
			return nil, err
		}
		return Call1("exp", Sub(xk, lse)), nil
	}
	// prod(x) = exp(Σ_i log x_i), for positive entries
	funcs["prod"] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
		i := b.freshFor(e.Args[0].Typ().Dims[0])
		x, err := b.Lower(e.Args[0], []Expr{IxE(i)})
		if err != nil {
			return nil, err
		}
		return Call1("exp", Sum([]Index{i}, Call1("log", x))), nil
	}
	funcs["eye"] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
		a, ok1 := sel[0].(*Ix)
		c, ok2 := sel[1].(*Ix)
		if !ok1 || !ok2 {
			return nil, ir.Errorf(e.Pos, "eye() indexed indirectly").Hintf("index eye(P) by loop indices only")
		}
		return Dlt(a.I, c.I), nil
	}
	// aliases lower as the function they name
	for name, fn := range ir.Funcs {
		if fn.Alias != "" {
			funcs[name] = funcs[fn.Alias]
		}
	}
}

// logSumExp lowers log Σ_i exp(x_i) for a vector expression x, shifted by
// its maximum so it never overflows.
func (b *Builder) logSumExp(x ir.Expr) (Expr, error) {
	i := b.freshFor(x.Typ().Dims[0])
	xi, err := b.Lower(x, []Expr{IxE(i)})
	if err != nil {
		return nil, err
	}
	j := b.freshFor(x.Typ().Dims[0])
	xj := Subst(xi, i, j)
	m := Max([]Index{j}, xj)
	return Add(m, Call1("log", Sum([]Index{i}, Call1("exp", Sub(xi, m))))), nil
}
