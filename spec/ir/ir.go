// Package ir is the checked model IR: the only view of a model that the
// derive and codegen stages see. It is produced by spec.Check from the AST and
// never refers back to it; every node keeps the source position it came from
// so that later stages can report errors and emit `// model.vi:L:C` comments.
package ir

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a source position.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File // the file as a whole
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Role says what a declared name is.
type Role int

const (
	RoleSize   Role = iota // a dimension, known once data is loaded
	RoleData               // observed data
	RoleConst              // a constant or hyperparameter, with a default data may override
	RoleParam              // a point-estimated parameter (variational EM)
	RoleLatent             // a latent variable with a variational factor
)

var roleNames = [...]string{"size", "data", "const", "param", "latent"}

func (r Role) String() string { return roleNames[r] }

// Kind is the element type of a variable.
type Kind int

const (
	Real Kind = iota
	Int
)

func (k Kind) String() string {
	if k == Int {
		return "int"
	}
	return "real"
}

// Class refines a type beyond element kind and shape.
type Class int

const (
	Plain   Class = iota // ordinary scalar, vector or array
	Cov                  // symmetric positive-definite matrix cov[P] (last two dims are P×P)
	Simplex              // simplex[K] (last dim sums to one, entries ≥ 0)
	Bag                  // bag[D] of 1..V: D documents as (term, count) lists
)

var classNames = [...]string{"plain", "cov", "simplex", "bag"}

func (c Class) String() string { return classNames[c] }

// Bound is one end of an integer range: either a literal or a size name.
type Bound struct {
	Value int    // used when Size == ""
	Size  string // the bound is the named size
}

func (b Bound) String() string {
	if b.Size != "" {
		return b.Size
	}
	return fmt.Sprint(b.Value)
}

// Type is the type of a declared variable or of an expression.
// Dims lists size names, outermost first: real[N, P] has Dims ["N","P"].
// A Cov type cov[P] has Dims ["P","P"]; a Bag type bag[D] of 1..V has Dims ["D"]
// and Range 1..V (the term ids).
type Type struct {
	Kind  Kind
	Class Class
	Dims  []string
	Range *[2]Bound // for int (and Bag term ids): inclusive bounds lo..hi; nil when unbounded
}

// Rank is the number of dimensions.
func (t Type) Rank() int { return len(t.Dims) }

func (t Type) String() string {
	s := t.Kind.String()
	switch t.Class {
	case Cov:
		s = "cov"
	case Simplex:
		s = "simplex"
	case Bag:
		s = "bag"
	}
	dims := t.Dims
	if t.Class == Cov && len(dims) >= 2 {
		dims = dims[:len(dims)-1]
	}
	if len(dims) > 0 {
		s += "["
		for i, d := range dims {
			if i > 0 {
				s += ", "
			}
			s += d
		}
		s += "]"
	}
	if t.Range != nil {
		if t.Class == Bag {
			s += " of " + t.Range[0].String() + ".." + t.Range[1].String()
		} else {
			s += " in " + t.Range[0].String() + ".." + t.Range[1].String()
		}
	}
	return s
}

// Treatment is how a latent variable's variational factor is updated.
type Treatment int

const (
	NoTreatment Treatment = iota // not a latent
	Conjugate                    // closed-form update (Eq. 18)
	Laplace                      // nonconjugate, Laplace update (Eq. 14)
	Delta                        // nonconjugate, delta-method update (Eq. 17)
	NCVMP                        // nonconjugate, non-conjugate variational message passing (Knowles & Minka 2011)
)

var treatmentNames = [...]string{"", "conjugate", "laplace", "delta", "ncvmp"}

func (t Treatment) String() string { return treatmentNames[t] }

// Nonconjugate reports whether the treatment uses a Gaussian q(θ) = N(μ, Σ).
func (t Treatment) Nonconjugate() bool { return t == Laplace || t == Delta || t == NCVMP }

// Var is a declared name: a size, data, constant, parameter or latent variable.
type Var struct {
	Name      string
	Role      Role
	Type      Type      // zero for sizes
	Treatment Treatment // latents only
	Default   Expr      // consts (and optionally params): initial value, element-wise; may be nil
	// Transform is the declared constraint of a real variable
	// (real<lower=0>, ordered[K], a nonconjugate simplex[K]), or nil. It
	// is on the Var, not its Type, because it describes the variable's
	// values and, for a nonconjugate latent, how its Gaussian factor's
	// unconstrained coordinates map to them; expressions reading the
	// variable have plain real types.
	Transform *Transform
	// SizeDefault is a size's declared default (`size K = 2`), used when
	// neither the data file nor the length of an array it gives
	// determines the size; 0 when it has none. For a Fixed size it is
	// the size's one value.
	SizeDefault int
	// Fixed marks the implicit size of a literal dimension, the 2 of
	// ordered[2] or real[N, 2]: its Name is the number as a string (which
	// no declared name can be, so types print as written), and the data
	// cannot change it.
	Fixed bool
	Pos   Pos
}

// DeclWithDims writes the type typ, written without dimensions
// ("real<lower=0>"), with v's dimensions, in backquotes, as a hint
// proposes a declaration: `real<lower=0>[K]`.
func (v *Var) DeclWithDims(typ string) string {
	if len(v.Type.Dims) == 0 {
		return "`" + typ + "`"
	}
	return "`" + typ + "[" + strings.Join(v.Type.Dims, ", ") + "]`"
}

// TypeString is v's type as declared, with its constraint:
// real<lower=0>[P], ordered[K].
func (v *Var) TypeString() string {
	s := v.Type.String()
	t := v.Transform
	if t == nil || t.Kind == SimplexMap {
		return s
	}
	if t.Kind.Elementwise() {
		return "real" + t.Text + s[len("real"):]
	}
	return t.Text + s[len("real"):]
}

// TransformKind is the kind of a Transform.
type TransformKind int

// The transforms, as Stan's (Stan Reference Manual, "Constraint
// transforms"): x is the constrained value, u the unconstrained one.
const (
	NoTransform     TransformKind = iota
	LowerBound                    // real<lower=a>: x = a + exp(u)
	UpperBound                    // real<upper=b>: x = b − exp(u)
	LowerUpper                    // real<lower=a, upper=b>: x = a + (b − a)·logistic(u)
	Ordered                       // ordered[K]: x_1 = u_1, x_k = x_{k−1} + exp(u_k)
	PositiveOrdered               // positive_ordered[K]: x_1 = exp(u_1), x_k = x_{k−1} + exp(u_k)
	SimplexMap                    // simplex[K] nonconjugate: stick-breaking from K − 1 coordinates
)

var transformNames = [...]string{"", "lower", "upper", "lower-upper", "ordered", "positive_ordered", "simplex"}

func (k TransformKind) String() string { return transformNames[k] }

// Elementwise reports whether the transform maps each coordinate alone.
func (k TransformKind) Elementwise() bool {
	return k == LowerBound || k == UpperBound || k == LowerUpper
}

// Transform is a declared constraint: its kind and, for bounds, the
// constant scalar expressions Lo and Hi (nil when absent). Text is the
// constraint as written in the type, `<lower=0>`, or the type name
// (ordered, positive_ordered, simplex).
type Transform struct {
	Kind   TransformKind
	Lo, Hi Expr
	Text   string
}

// Model is a checked model.
type Model struct {
	Name    string
	NamePos Pos    // where the name is written after `model`
	File    string // base name of the .vi file, e.g. "logreg.vi"
	Vars    []*Var // in declaration order
	Factors []*Factor
	// Lets are the `let` definitions, in source order, for reports: their
	// uses are already expanded in Factors.
	Lets []*Let
	// SizeChecks are the sizes the checker matched with the lengths of
	// vectors built in the model ([a, b, 0], append(v, 0)); generated code
	// compares them when the data is loaded.
	SizeChecks []SizeCheck
	byName     map[string]*Var
	// SourceHash is the SHA-256 of the .vi source in hex, set by
	// spec.Load; generated files carry it so that a stale package can be
	// told from a fresh one (vigen gen -check).
	SourceHash string
}

// SizeCheck says that the declared size Size must equal the length of a
// vector built in the model: Const plus the sum of the sizes Sizes.
type SizeCheck struct {
	Size  string
	Const int
	Sizes []string
	What  string // the vector as written, for messages
	Pos   Pos
}

// Lookup returns the declared variable called name, or nil.
func (m *Model) Lookup(name string) *Var {
	if m.byName == nil {
		m.byName = make(map[string]*Var, len(m.Vars))
		for _, v := range m.Vars {
			m.byName[v.Name] = v
		}
	}
	return m.byName[name]
}

// VarsWithRole returns the variables with role r, in declaration order.
func (m *Model) VarsWithRole(r Role) []*Var {
	var out []*Var
	for _, v := range m.Vars {
		if v.Role == r {
			out = append(out, v)
		}
	}
	return out
}

// Prior returns the factor whose target is the variable called name, or nil.
func (m *Model) Prior(name string) *Factor {
	for _, f := range m.Factors {
		if f.Target != nil && f.Target.Var.Name == name {
			return f
		}
	}
	return nil
}

// Priors returns the factors whose target is the variable called name, in
// source order: one, or for a latent vector drawn in parts (x[1] ~ …,
// `for t in 2:T { x[t] ~ … }`) one per part.
func (m *Model) Priors(name string) []*Factor {
	var out []*Factor
	for _, f := range m.Factors {
		if f.Target != nil && f.Target.Var.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// Children returns the factors, other than its prior, whose arguments read
// the variable called name, in source order.
func (m *Model) Children(name string) []*Factor {
	var out []*Factor
	for _, f := range m.Factors {
		if f.Target != nil && f.Target.Var.Name == name {
			continue
		}
		for _, a := range f.Args {
			if Mentions(a, name) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// Plate is one enclosing loop of a factor: `for n in 1:N` has Index "n" and
// Size "N". A loop over the tokens of a bag, `for n in w[d]`, has Size "" and
// Bag set to the indexed bag expression. A loop over part of a size runs
// from 1+Lo to Size+Hi: `for t in 3:T` has Lo 2, `for t in 1:T-1` Hi −1.
type Plate struct {
	Index  string
	Size   string
	Lo, Hi int
	Bag    *Ref
	Pos    Pos
}

// Ranged reports whether the plate runs over part of its size only.
func (p Plate) Ranged() bool { return p.Lo != 0 || p.Hi != 0 }

// Range writes the plate's range as in the model: "1:N", "3:T", "1:T-1".
func (p Plate) Range() string {
	s := fmt.Sprintf("%d:%s", 1+p.Lo, p.Size)
	switch {
	case p.Hi > 0:
		s += fmt.Sprintf("+%d", p.Hi)
	case p.Hi < 0:
		s += fmt.Sprint(p.Hi)
	}
	return s
}

// Factor is a `target ~ Dist(args)` statement with its enclosing plates,
// or a `factor EXPR` statement (a term of the log density, Stan's
// `target += EXPR`): Target nil, Dist "", and Args the one real scalar
// EXPR, which is the factor's log density (IsTerm).
type Factor struct {
	Plates []Plate // outermost first
	Target *Ref    // the variable (possibly indexed) being distributed
	Dist   string  // family name, an entry of Families
	Args   []Expr
	Pos    Pos
}

// Let is a `let NAME = Value` definition, or `let NAME[Index...] = Value`
// (an array over the loops of those indices).
type Let struct {
	Name  string
	Index []string // the loop indices of an indexed let; nil otherwise
	Value Expr
	Pos   Pos
}

// IsTerm reports whether f is a `factor EXPR` statement, whose log
// density is Args[0] and which has no target.
func (f *Factor) IsTerm() bool { return f.Target == nil }

// Expr is a checked expression. Every expression has a type.
type Expr interface {
	Position() Pos
	Typ() Type
	exprNode()
}

// Num is a numeric literal.
type Num struct {
	Value float64
	Pos   Pos
}

// Ref reads a declared variable, possibly indexed. Each index is an Index
// (a plate's loop variable) or an integer-valued expression (usually a Ref to
// int data, as in beta[z[n]]); len(Index) ≤ rank of Var. The type is the
// variable's type with the indexed leading dimensions removed.
type Ref struct {
	Var   *Var
	Index []Expr
	T     Type
	Pos   Pos
}

// Index reads a plate's loop variable (an integer, 1-based in the language).
type Index struct {
	Name string
	Size string // range 1..Size of the plate that binds it ("" for bag token loops)
	Pos  Pos
}

// Offset reads a loop index shifted by an int literal, as the t-1 of
// y[t-1]; it appears only as an index of a Ref. Its value is Index's plus
// Off, and the checker has proved it within the indexed dimension for every
// value of the loop.
type Offset struct {
	Index *Index
	Off   int
	Pos   Pos
}

// String writes the offset as in the model: "t-1", "t+2".
func (e *Offset) String() string {
	if e.Off < 0 {
		return fmt.Sprintf("%s-%d", e.Index.Name, -e.Off)
	}
	return fmt.Sprintf("%s+%d", e.Index.Name, e.Off)
}

// Call applies a built-in function (an entry of Funcs).
type Call struct {
	Func string
	Args []Expr
	T    Type
	Pos  Pos
}

// Binary is an arithmetic operator: one of + - * / ^, elementwise on
// scalars or equal shapes (one side may be a scalar), or OpMatMul.
type Binary struct {
	Op   byte
	X, Y Expr
	T    Type
	Pos  Pos
}

// OpMatMul is the Op of a Binary that is a matrix product, written `*`:
// real[A, B] by real[B] gives real[A], real[A] by real[A, B] gives real[B],
// real[A, B] by real[B, C] gives real[A, C].
const OpMatMul byte = '@'

// FuncVector is the Func of a Call that is a vector literal [a, b, ...]
// of scalars; FuncAppend ("append") concatenates two vectors or scalars.
// Their length is a dimension of their type like any other: a declared
// size that the checker matched with it (Model.SizeChecks).
const (
	FuncVector = "[]"
	FuncAppend = "append"
)

// Unary is negation.
type Unary struct {
	Op  byte // '-'
	X   Expr
	T   Type
	Pos Pos
}

// DistArg is a distribution written as an argument of another one, without
// its target: the components of `y ~ Mixture(w, Normal(m1, s1), Normal(m2,
// s2))`. It appears only as an argument of a Factor, for a parameter of
// its family marked Dist; its target is the factor's, and T is the
// target's type.
type DistArg struct {
	Dist string // family name, an entry of Families
	Args []Expr
	T    Type
	Pos  Pos
}

func (e *DistArg) Position() Pos { return e.Pos }
func (e *DistArg) Typ() Type     { return e.T }
func (*DistArg) exprNode()       {}

func (e *Num) Position() Pos    { return e.Pos }
func (e *Ref) Position() Pos    { return e.Pos }
func (e *Index) Position() Pos  { return e.Pos }
func (e *Offset) Position() Pos { return e.Pos }
func (e *Call) Position() Pos   { return e.Pos }
func (e *Binary) Position() Pos { return e.Pos }
func (e *Unary) Position() Pos  { return e.Pos }

func (e *Num) Typ() Type    { return Type{Kind: Real} }
func (e *Ref) Typ() Type    { return e.T }
func (e *Index) Typ() Type  { return Type{Kind: Int} }
func (e *Offset) Typ() Type { return Type{Kind: Int} }
func (e *Call) Typ() Type   { return e.T }
func (e *Binary) Typ() Type { return e.T }
func (e *Unary) Typ() Type  { return e.T }

func (*Num) exprNode()    {}
func (*Ref) exprNode()    {}
func (*Index) exprNode()  {}
func (*Offset) exprNode() {}
func (*Call) exprNode()   {}
func (*Binary) exprNode() {}
func (*Unary) exprNode()  {}

// Mentions reports whether e reads the variable called name.
func Mentions(e Expr, name string) bool {
	found := false
	Walk(e, func(x Expr) {
		if r, ok := x.(*Ref); ok && r.Var.Name == name {
			found = true
		}
	})
	return found
}

// Walk calls fn on e and on each of its subexpressions, depth first, once
// per node: a subexpression shared by several operands (a let read more
// than once is one expression wherever it is read) is visited once, so a
// walk costs the size of the expression's graph, not of its tree.
func Walk(e Expr, fn func(Expr)) {
	seen := map[Expr]bool{}
	var walk func(Expr)
	walk = func(e Expr) {
		if e == nil || seen[e] {
			return
		}
		switch e.(type) {
		case *Ref, *Call, *DistArg, *Binary, *Unary, *Offset:
			seen[e] = true // leaves are cheap to visit twice
		}
		fn(e)
		switch e := e.(type) {
		case *Ref:
			for _, i := range e.Index {
				walk(i)
			}
		case *Call:
			for _, a := range e.Args {
				walk(a)
			}
		case *DistArg:
			for _, a := range e.Args {
				walk(a)
			}
		case *Binary:
			walk(e.X)
			walk(e.Y)
		case *Unary:
			walk(e.X)
		case *Offset:
			walk(e.Index)
		}
	}
	walk(e)
}

// SortedNames returns the names of vs, sorted.
func SortedNames(vs []*Var) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	sort.Strings(out)
	return out
}
