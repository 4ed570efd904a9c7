package derive

import (
	"fmt"
	"math"
	"slices"

	"github.com/vigen-go/vigen/spec/ir"
)

// Lower refuses a fold of the model's own numbers out of float64's range
// (outOfRange), but a family computes more from its arguments than the
// model writes: Normal(0, 1e-170) is a model whose numbers are all in
// range, yet its log density reads the precision sd^(-2) = 1e340, which
// is +Inf in float64, and the fit ends not_finite in its first iteration;
// Normal(0, 1e170)'s precision underflows to 0, and the prior's quadratic
// term, all that makes it a proper prior, vanishes. ArgRange finds such
// quantities before the fit, for the arguments of a statement written as
// numbers.

// ArgQuantity is a quantity that a family computes from its arguments
// given as numbers whose value float64 cannot hold.
type ArgQuantity struct {
	// Quantity is the quantity, written in the parameters' names
	// ("sd^(-2)"), and Value what float64 arithmetic makes of it: ±Inf,
	// NaN, or 0 for a positive quantity that underflowed.
	Quantity string
	Value    float64
	// Params are the arguments it reads (their indices among the
	// family's parameters), and Where the part of the family that
	// computes it ("log density", "natural parameters", "log
	// normalizer").
	Params []int
	Where  string
}

// Problem says what is wrong with the quantity's value, as an error
// message goes on after the quantity.
func (q *ArgQuantity) Problem() string {
	switch {
	case math.IsNaN(q.Value):
		return "is not a number (NaN) in float64"
	case q.Value == 0:
		return "underflows to 0 in float64, though it is positive: the term it scales vanishes"
	}
	return fmt.Sprintf("is %v in float64", q.Value)
}

// ArgRange checks the quantities that family dist computes from its
// arguments given as numbers (vals[k] where known[k]; the value and the
// other arguments are unknowns): those of its log density, as written
// and with its powers of sums multiplied out (expandPoly, as the
// expectations do), and, for an exponential family, of its natural
// parameters and log normalizer (a conjugate prior's). Each product,
// power, sum or function of the known arguments alone is evaluated; the
// first, innermost, that is ±Inf or NaN, or that is a product or power
// of positive arguments (an sd, a rate) only and underflowed to 0, is
// returned; nil if there is none, or if dist is not an elementwise
// family of scalars.
func ArgRange(dist string, vals []float64, known []bool) *ArgQuantity {
	d := Dists[dist]
	if d == nil || d.Family == nil || !d.Elementwise || d.Variadic || d.LogDensity == nil || len(vals) != len(d.Params) || len(known) != len(vals) {
		return nil
	}
	domains, _ := ir.ParseDomains(d.Constraints)
	env := &Env{Tensors: map[string]*Value{}}
	positive := map[string]bool{}
	param := map[string]int{}
	args := make([]Val, len(d.Params))
	for k, p := range d.Params {
		if p.Shape != "" {
			return nil
		}
		t := T(p.Name)
		args[k] = Val{At: func([]Expr) Expr { return t }}
		param[p.Name] = k
		if known[k] {
			env.Tensors[p.Name] = &Value{Data: []float64{vals[k]}}
			dom, ok := domains[p.Name]
			positive[p.Name] = ok && dom.LoLetter == "" && dom.Lo >= 0 && vals[k] > 0
		}
	}
	if _, clash := param[d.Value.Name]; clash || d.Value.Shape != "" {
		return nil
	}
	xt := T(d.Value.Name)
	x := Val{At: func([]Expr) Expr { return xt }}
	forms, ok := argForms(d, x, args)
	if !ok {
		return nil
	}
	for _, f := range forms {
		if q := firstOutOfRange(f.e, env, positive); q != nil {
			q.Where = f.where
			for name := range quantityReads(q.expr) {
				q.Params = append(q.Params, param[name])
			}
			slices.Sort(q.Params)
			return &q.ArgQuantity
		}
	}
	return nil
}

// argForm is an expression of a family's arguments, and what it is.
type argForm struct {
	e     Expr
	where string
}

// argForms are the expressions of d's arguments that ArgRange evaluates;
// false if they cannot be built without a model (no family of scalars
// needs one: TestArgRangeOrdinaryArguments).
func argForms(d *Dist, x Val, args []Val) (forms []argForm, ok bool) {
	defer func() {
		if recover() != nil {
			forms, ok = nil, false
		}
	}()
	lp, err := d.LogDensity(nil, x, args)
	if err != nil {
		return nil, false
	}
	forms = append(forms, argForm{lp, "log density"})
	if e := expandPoly(lp); e != nil {
		forms = append(forms, argForm{e, "log density"})
	}
	if ef := d.ExpFam; ef != nil {
		for _, s := range ef.Stats {
			if s.Eta != nil {
				forms = append(forms, argForm{s.Eta(nil, args).Scalar(), "natural parameters"})
			}
		}
		if ef.LogNorm != nil {
			forms = append(forms, argForm{ef.LogNorm(nil, args), "log normalizer"})
		}
	}
	return forms, true
}

// found is an ArgQuantity with its expression.
type found struct {
	ArgQuantity
	expr Expr
}

// firstOutOfRange walks e, innermost first, for a quantity of the known
// arguments alone (env's tensors) out of range (ArgRange).
func firstOutOfRange(e Expr, env *Env, positive map[string]bool) *found {
	closed := func(e Expr) bool {
		ok := true
		Visit(e, func(x Expr) {
			switch x := x.(type) {
			case *Tensor:
				if _, known := env.Tensors[x.Name]; !known || len(x.Idx) > 0 {
					ok = false
				}
			case *Ix, *Shift, *SumNode, *MaxNode, *Delta, *IDelta:
				ok = false
			}
		})
		return ok
	}
	check := func(q Expr) *found {
		v, ok := evalSafely(q, env)
		if !ok {
			return nil
		}
		if math.IsInf(v, 0) || math.IsNaN(v) || v == 0 && positiveOnly(q, positive) {
			return &found{ArgQuantity{Quantity: String(q), Value: v}, q}
		}
		return nil
	}
	var walk func(e Expr) *found
	walk = func(e Expr) *found {
		for _, c := range Children(e) {
			if f := walk(c); f != nil {
				return f
			}
		}
		if _, isNum := e.(*Num); isNum {
			return nil
		}
		if closed(e) {
			return check(e)
		}
		// the part of a product or a sum that reads the known arguments
		// alone (−½·sd^(−2) of −½·sd^(−2)·x²)
		var part []Expr
		switch e := e.(type) {
		case *MulNode:
			for _, f := range e.Factors {
				if closed(f) {
					part = append(part, f)
				}
			}
			if len(part) > 1 {
				return check(Mul(part...))
			}
		case *AddNode:
			for _, t := range e.Terms {
				if closed(t) {
					part = append(part, t)
				}
			}
			if len(part) > 1 {
				return check(Add(part...))
			}
		}
		return nil
	}
	return walk(e)
}

// evalSafely evaluates e, false if the evaluation panics.
func evalSafely(e Expr, env *Env) (v float64, ok bool) {
	defer func() {
		if recover() != nil {
			v, ok = 0, false
		}
	}()
	return Eval(e, env), true
}

// positiveOnly reports whether e is a product or power of positive
// arguments and non-zero numbers, whose exact value is non-zero: a value
// of 0 is then an underflow.
func positiveOnly(e Expr, positive map[string]bool) bool {
	switch e := e.(type) {
	case *Num:
		return e.V != 0
	case *Tensor:
		return positive[e.Name]
	case *Call:
		return e.Prim.Name == "pow" && positiveOnly(e.Args[0], positive)
	case *MulNode:
		for _, f := range e.Factors {
			if !positiveOnly(f, positive) {
				return false
			}
		}
		return true
	}
	return false
}

// quantityReads is the set of tensors e reads.
func quantityReads(e Expr) map[string]bool {
	out := map[string]bool{}
	Visit(e, func(x Expr) {
		if t, ok := x.(*Tensor); ok {
			out[t.Name] = true
		}
	})
	return out
}
