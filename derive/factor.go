package derive

import (
	"fmt"

	"github.com/vigen-go/vigen/spec/ir"
)

// FactorLogDensity returns the log density of a `~` statement summed over its
// plates: Σ_plates log p(target | args).
func (b *Builder) FactorLogDensity(f *ir.Factor) (e Expr, err error) {
	d, ok := Dists[f.Dist]
	if !ok {
		return nil, fmt.Errorf("%s: the %s distribution is not supported by the code generator yet", f.Pos, f.Dist)
	}
	fam := ir.Families[f.Dist]
	defer func() {
		if r := recover(); r != nil {
			le, ok := r.(lowerError)
			if !ok {
				panic(r)
			}
			e, err = nil, le.err
		}
	}()
	var plates []Index
	for _, p := range f.Plates {
		if p.Bag != nil {
			return nil, fmt.Errorf("%s: bag-of-words plates are not supported by the code generator yet", p.Pos)
		}
		plates = append(plates, Index{Name: p.Index, Size: p.Size})
	}
	x := b.ValOf(f.Target)
	args := make([]Val, len(f.Args))
	for k, a := range f.Args {
		args[k] = b.ValOf(a)
	}
	var lp Expr
	if fam.Elementwise && len(x.Dims) > 0 {
		// Independent draws for each element of an array target.
		var el []Index
		var sel []Expr
		for _, d := range x.Dims {
			i := b.freshFor(d)
			el = append(el, i)
			sel = append(sel, IxE(i))
		}
		xs := Val{At: func([]Expr) Expr { return x.At(sel) }}
		as := make([]Val, len(args))
		for k, a := range args {
			a := a
			as[k] = Val{Src: a.Src, At: func([]Expr) Expr { return a.At(sel[len(sel)-len(a.Dims):]) }}
		}
		one, err := d.LogDensity(b, xs, as)
		if err != nil {
			return nil, err
		}
		lp = Sum(el, one)
	} else {
		lp, err = d.LogDensity(b, x, args)
		if err != nil {
			return nil, err
		}
	}
	return Sum(plates, lp), nil
}
