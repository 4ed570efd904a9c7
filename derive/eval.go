package derive

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Env supplies values for Eval: tensors as flat row-major arrays with their
// dimensions, sizes, and the values of free indices.
type Env struct {
	Tensors map[string]*Value
	Sizes   map[string]int
	Index   map[string]int
}

// Value is a dense tensor: Data in row-major order over Dims.
type Value struct {
	Dims []int
	Data []float64
}

// Eval evaluates e directly from its definition (a tree-walking interpreter:
// slow, independent of codegen, used to test generated code and derivatives).
func Eval(e Expr, env *Env) float64 {
	switch e := e.(type) {
	case *Num:
		return e.V
	case *Ix:
		return float64(env.Index[e.I.Name])
	case *Shift:
		return float64(env.Index[e.I.Name] + e.Off + 1) // a 1-based value
	case *Delta:
		if env.Index[e.A.Name] == env.Index[e.B.Name] {
			return 1
		}
		return 0
	case *IDelta:
		if int(Eval(e.X, env))-1 == env.Index[e.I.Name] {
			return 1
		}
		return 0
	case *Tensor:
		if len(e.Name) > 0 && e.Name[0] == '#' {
			if size, l, h, ok := SizeRange(e.Name[1:]); ok {
				return math.Max(0, float64(env.Sizes[size]+h-l))
			}
			if e.Name[1:] == ScalarSize {
				return 1
			}
			return float64(env.Sizes[e.Name[1:]])
		}
		name, shift, _ := Shifted(e.Name) // y[t-1]: y's entry at shifted indices
		v, ok := env.Tensors[name]
		if !ok {
			panic(fmt.Sprintf("derive.Eval: no tensor %q", e.Name))
		}
		off := 0
		for k, x := range e.Idx {
			var i int
			if ix, ok := x.(*Ix); ok {
				i = env.Index[ix.I.Name]
			} else {
				i = int(Eval(x, env)) - 1 // indirect and literal indices are 1-based values
			}
			if k < len(shift) {
				i += shift[k]
			}
			off = off*v.Dims[k] + i
		}
		return v.Data[off]
	case *Call:
		xs := make([]float64, len(e.Args))
		for k, a := range e.Args {
			xs[k] = Eval(a, env)
		}
		return e.Prim.Eval(xs)
	case *AddNode:
		s := 0.0
		for _, t := range e.Terms {
			s += Eval(t, env)
		}
		return s
	case *MulNode:
		p := 1.0
		for _, f := range e.Factors {
			p *= Eval(f, env)
		}
		return p
	case *SumNode:
		return evalSum(e.Idx, e.Body, env)
	case *MaxNode:
		return evalMax(e.Idx, e.Body, env)
	}
	panic(fmt.Sprintf("derive.Eval: %T", e))
}

func evalSum(idx []Index, body Expr, env *Env) float64 {
	if len(idx) == 0 {
		return Eval(body, env)
	}
	j := idx[0]
	lo, n := 0, 0
	if bag, parent, ok := j.Ragged(); ok {
		off := env.Tensors[bag+".off"].Data
		d := env.Index[parent.Name]
		lo, n = int(off[d]), int(off[d+1])
	} else if size, l, h, ok := SizeRange(j.Size); ok {
		lo, n = l, env.Sizes[size]+h // a loop over part of a size
	} else if j.Size == ScalarSize {
		n = 1
	} else if n, ok = env.Sizes[j.Size]; !ok {
		if n, ok = fixedSize(j.Size); !ok {
			panic(fmt.Sprintf("derive.Eval: no size %q", j.Size))
		}
	}
	old, had := env.Index[j.Name]
	s := 0.0
	for i := lo; i < n; i++ {
		env.Index[j.Name] = i
		s += evalSum(idx[1:], body, env)
	}
	if had {
		env.Index[j.Name] = old
	} else {
		delete(env.Index, j.Name)
	}
	return s
}

// fixedSize is the value of the fixed size of a literal dimension, named
// by its number ("2" of real[2]).
func fixedSize(name string) (int, bool) {
	if name == "" || strings.Trim(name, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(name)
	return n, err == nil
}

func evalMax(idx []Index, body Expr, env *Env) float64 {
	if len(idx) == 0 {
		return Eval(body, env)
	}
	j := idx[0]
	old, had := env.Index[j.Name]
	m := math.Inf(-1)
	n, ok := env.Sizes[j.Size]
	if j.Size == ScalarSize {
		n = 1
	} else if !ok {
		if n, ok = fixedSize(j.Size); !ok {
			panic(fmt.Sprintf("derive.Eval: no size %q", j.Size))
		}
	}
	for i := 0; i < n; i++ {
		env.Index[j.Name] = i
		m = math.Max(m, evalMax(idx[1:], body, env))
	}
	if had {
		env.Index[j.Name] = old
	} else {
		delete(env.Index, j.Name)
	}
	return m
}
