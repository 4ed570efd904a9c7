package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file emits what a sharded fit (runtime.FitShards, and the Beam
// pipeline of runtime/beam) needs of a model besides SVI's methods:
// Model.Shard, which makes a runtime.Shard of the model's data as units
// of a larger whole, caModel's Locals (runtime.ShardLocals) and, with
// params, SetParams (runtime.ShardParams). newState draws a shard's
// random starting values where the whole fit would (runtime.ShardRange).

// shardReason says why a sharded fit does not apply to the model, or "".
func (f *fitGen) shardReason() string {
	if why := f.sviReason(); why != "" {
		return why
	}
	// a shard's model has its own count of units: a value computed from
	// it would differ from shard to shard
	size := f.unit.Size
	for _, v := range f.g.m.Vars {
		if v.Default != nil && ir.Mentions(v.Default, size) {
			return fmt.Sprintf("the default of %s (%s) reads %s, the number of units, which differs from shard to shard", v.Name, f.pos(v), size)
		}
	}
	for _, fc := range f.g.m.Factors {
		for _, a := range fc.Args {
			if ir.Mentions(a, size) {
				return fmt.Sprintf("the statement at %s:%d:%d reads %s, the number of units, which differs from shard to shard", f.g.m.File, fc.Pos.Line, fc.Pos.Col, size)
			}
		}
	}
	if g := f.sviGlobals(); len(g) > 1 {
		// FitCA updates them in turn, each given the others' new values;
		// a shard's statistics are computed before any of them moves
		return fmt.Sprintf("it has %d conjugate global latents (%s and %s), which coordinate ascent updates in turn, each from statistics under the others' new values, while a shard's statistics are all computed before any of them moves", len(g), g[0].v.Name, g[1].v.Name)
	}
	for _, qi := range f.qs {
		if !qi.local {
			continue
		}
		dims := f.paramDims(qi, 0)
		if f.perToken(qi) {
			if qi.q.Family != "Categorical" {
				return fmt.Sprintf("the per-token %s (%s) starts from random values, which a shard cannot draw where the whole fit would", qi.v.Name, f.pos(qi.v))
			}
			continue
		}
		if len(dims) == 0 || dims[0] != f.unit.Size {
			return fmt.Sprintf("the local %s (%s) is not laid out unit after unit (its first dimension is not %s)", qi.v.Name, f.pos(qi.v), f.unit.Size)
		}
	}
	return ""
}

// shardInit returns the call drawing local qi's field k's starting values
// in newState: init (runtime.InitPositive or InitNormal) for the shard's
// units only when the model can be sharded, else for all.
func (f *fitGen) shardInit(qi *qInfo, k int, init string) string {
	field := qi.fields[k]
	if !qi.local || f.shardReason() != "" {
		return f.w.Sf("%s(q.rng, q.%s)", rt(init), field)
	}
	return f.w.Sf("%s(q.rng, q.%s, m.shard, %s)", rt(init+"In"), field, f.length(f.paramDims(qi, k)[1:]))
}

// emitShard prints Model.Shard, caModel.Locals and caModel.SetParams.
func (f *fitGen) emitShard() {
	if f.shardReason() != "" {
		return
	}
	w := f.w
	var floats, flags []string
	for _, qi := range f.qs {
		if !qi.local {
			continue
		}
		for _, fl := range append(append([]string(nil), qi.fields...), qi.mfields...) {
			floats = append(floats, "q."+fl)
		}
		if qi.obj != nil && f.perUnit(qi) != nil {
			flags = append(flags, "q."+qi.fields[0]+"Started")
		}
	}
	list := func(typ string, xs []string) string {
		if len(xs) == 0 {
			return "nil"
		}
		return fmt.Sprintf("%s{%s}", typ, strings.Join(xs, ", "))
	}
	w.Func([]string{"Locals lists q's arrays local to the units, each unit after unit, and",
		"its per-unit flags, for a sharded fit (runtime.ShardLocals)."},
		"(a *caModel) Locals(q *state) ([][]float64, [][]bool)", func() {
			w.Return(list("[][]float64", floats), list("[][]bool", flags))
		})
	w.Func([]string{"GlobalParams lists the parameter arrays of global factor g, in",
		"Stochastic's order, whose largest change is the factor's (runtime.ShardGlobals)."},
		"(a *caModel) GlobalParams(q *state, g int) [][]float64", func() {
			globals := f.sviGlobals()
			if len(globals) == 0 {
				w.Return("nil")
				return
			}
			w.Block("switch g", func() {
				for k, qi := range globals {
					var xs []string
					for _, fl := range qi.fields {
						xs = append(xs, "q."+fl)
					}
					w.Pf("case %d: // %s (%s)", k, qi.v.Name, f.pos(qi.v))
					w.Return(list("[][]float64", xs))
				}
			})
			w.Return("nil")
		})
	units := f.dim(f.unit.Size)
	doc := []string{
		"Shard returns m's data as units first+1..first+D of total, one shard",
		"of a sharded fit: variational EM whose E-steps run where the shards",
		"are (runtime.FitShards; runtime/beam runs them as an Apache Beam",
		"pipeline). Data without units give the driver's shard, which holds the",
		"global factors and params. opts are those of the single-process fit",
		"it reproduces: every shard and the driver start from the same seed,",
		"and draw their starting values where that fit would.",
	}
	w.Func(doc, w.Sf("(m *Model) Shard(opts Options, first, total int) (%s, error)", rt("Shard")), func() {
		var perToken []string
		for _, qi := range f.qs {
			if f.perToken(qi) {
				perToken = append(perToken, fmt.Sprintf(", %q", qi.v.Name))
			}
		}
		w.IfErr(w.Sf("err := opts.Prepare(%q%s)", f.g.m.Name, strings.Join(perToken, "")), "nil", "err")
		w.IfErr("err := opts.CheckShard()", "nil", "err")
		for _, b := range f.g.bags {
			w.If(cond("!opts.AllowEmpty"), func() {
				w.IfErr(w.Sf("err := %s(%q, m.%s)", rt("CheckNoEmptyDocs"), b.Name, b.Off), "nil", "err")
			})
		}
		w.P("c := *m // the shard's position is its own")
		w.P("m = &c")
		w.P("var err error")
		w.IfErr(w.Sf("m.shard, err = %s(first, %s, total)", rt("NewShardRange"), units), "nil", "err")
		if len(f.params()) > 0 {
			w.IfErr("m, err = m.withOwnParams(opts)", "nil", "err")
		}
		w.P("q, err := m.newState(opts)")
		w.If(cond("err != nil"), func() { w.Return("nil", "err") })
		w.P("data := m.dataFP")
		w.If(cond("data == nil"), func() { w.P("data = m.fingerprint()") })
		w.P("// its result's fingerprint is of the shard's data")
		w.Pf("a := &caModel{m: m, opts: opts, fp: opts.Fingerprint(data, q.methods()).OfModel(%q)}", f.g.m.SourceHash)
		w.Return(w.Sf("%s[*state, *scratch, Params, *Result](a, q, opts.ShardOptions(first, total))", rt("NewShard")))
	})
	if len(f.params()) > 0 {
		w.Func([]string{"SetParams sets the params to p (runtime.ShardParams), with the values",
			"derived from them."},
			"(a *caModel) SetParams(p Params) error", func() {
				w.IfErr("err := a.m.startParams(&p)", "err")
				w.Return("a.m.computeAux()")
			})
	}
}
