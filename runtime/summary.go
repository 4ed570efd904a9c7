package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// A Result's summary (Result.Summary) and vigen summary's table are one
// row per element of every latent: its name as in the model (theta[2,5],
// 1-based), the family of its q, and the marginal mean, sd and 5%, 50% and
// 95% quantiles under q, on the latent's own scale for a constrained
// latent (family Normal/lower: a Gaussian on the unconstrained scale
// summarized through the transform).

// SummaryRow is one element of a latent (or, in vigen summary, a param).
// HasSD and HasQuantiles say whether SD and the quantiles mean anything
// (a param has neither, a categorical no quantiles); JSON writes null for
// those that do not, or that are not finite.
type SummaryRow struct {
	Name, Family            string
	Mean, SD, Q05, Q50, Q95 float64
	HasSD, HasQuantiles     bool
}

// summaryJSON is SummaryRow as JSON.
type summaryJSON struct {
	Name   string   `json:"name"`
	Family string   `json:"family"`
	Mean   *float64 `json:"mean"`
	SD     *float64 `json:"sd"`
	Q05    *float64 `json:"q05"`
	Q50    *float64 `json:"q50"`
	Q95    *float64 `json:"q95"`
}

// MarshalJSON writes the row with null for what it does not have.
func (r SummaryRow) MarshalJSON() ([]byte, error) {
	num := func(x float64, ok bool) *float64 {
		if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(summaryJSON{Name: r.Name, Family: r.Family, Mean: num(r.Mean, true), SD: num(r.SD, r.HasSD),
		Q05: num(r.Q05, r.HasQuantiles), Q50: num(r.Q50, r.HasQuantiles), Q95: num(r.Q95, r.HasQuantiles)})
}

// UnmarshalJSON reads what MarshalJSON writes: a null mean or quantile
// as NaN (so that writing the row again gives the same JSON).
func (r *SummaryRow) UnmarshalJSON(b []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	val := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*r = SummaryRow{Name: j.Name, Family: j.Family, Mean: val(j.Mean), SD: val(j.SD), HasSD: j.SD != nil,
		Q05: val(j.Q05), Q50: val(j.Q50), Q95: val(j.Q95), HasQuantiles: j.Q05 != nil || j.Q50 != nil || j.Q95 != nil}
	return nil
}

// SummaryLimit is the most elements of one latent a Result's summary
// holds, and SummaryTotal the most rows of all: larger latents (a topic
// model's per-document proportions, its topics) are listed in
// Result.SummaryOmitted instead, and vigen summary summarizes them from
// the result on demand. Each row is about 200 bytes of indented JSON, and
// a conjugate factor's three quantiles take a few microseconds each.
const (
	SummaryLimit = 10000
	SummaryTotal = 20000
)

// Summarize returns the summary rows of the latents l, a generated
// package's Latent (a struct of *Gaussian, []*Gaussian, *Normal and
// *Factor fields, named by their JSON tags), in field order, and the
// latents it leaves out, with why: more than SummaryLimit elements, or
// beyond SummaryTotal rows in all, or a factor it cannot summarize. Latents
// the result leaves out (nil, Settings.Keep) have no rows.
func Summarize(l any) (rows []SummaryRow, omitted []string, err error) {
	v := reflect.ValueOf(l)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("summary: %T is not a struct of latents", l)
	}
	for k := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(k).Tag.Get("json"), ",")
		f := v.Field(k)
		if name == "" || name == "-" || !v.Type().Field(k).IsExported() || f.IsZero() {
			continue
		}
		n := 0
		switch x := f.Interface().(type) {
		case *Gaussian:
			n = len(x.Mean)
		case []*Gaussian:
			for _, g := range x {
				if g != nil {
					n += len(g.Mean)
				}
			}
		case *Normal:
			n = 1
		case *Factor:
			n = 1
			for _, s := range x.Shape {
				n *= s
			}
		default:
			return nil, nil, fmt.Errorf("summary: latent %s: a %T", name, x)
		}
		switch {
		case n > SummaryLimit:
			omitted = append(omitted, fmt.Sprintf("%s: %d elements", name, n))
			continue
		case len(rows)+n > SummaryTotal:
			omitted = append(omitted, fmt.Sprintf("%s: %d elements beyond the first %d rows", name, n, len(rows)))
			continue
		}
		rs, err := typedRows(name, f.Interface(), 0)
		if err != nil {
			omitted = append(omitted, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		rows = append(rows, rs...)
	}
	return rows, omitted, nil
}

// typedRows are the rows of one latent's factor x, a *Gaussian,
// []*Gaussian, *Normal or *Factor (with quantiles for its first need
// elements, whole rows; 0: all); a panic in a family's numbers is an
// error, so that one latent cannot lose the others.
func typedRows(name string, x any, need int) (rows []SummaryRow, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("internal error in vigen (please report it): %v", r)
		}
	}()
	switch x := x.(type) {
	case *Gaussian:
		return normalRows(name, "Normal", []int{len(x.Mean)}, x.Mean, x.SD(), x.Constrained, 0, nil), nil
	case []*Gaussian:
		for d, g := range x {
			if g != nil {
				rows = normalRows(name, "Normal", []int{len(x), len(g.Mean)}, g.Mean, g.SD(), g.Constrained, d*len(g.Mean), rows)
			}
		}
		return rows, nil
	case *Normal:
		return scalarNormalRows(name, x), nil
	case *Factor:
		return factorRows(name, x, need)
	}
	return nil, fmt.Errorf("a %T", x)
}

// NamedRaw is one key of a JSON object and its value.
type NamedRaw struct {
	Name string
	Raw  json.RawMessage
}

// OrderedObject returns the keys of the JSON object b with their values,
// in the order written.
func OrderedObject(b []byte) ([]NamedRaw, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("want a JSON object")
	}
	var out []NamedRaw
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, NamedRaw{key, raw})
	}
	return out, nil
}

// ElementName is name with the 1-based indices of the i-th element of a
// row-major array of shape (none for a scalar).
func ElementName(name string, shape []int, i int) string {
	if len(shape) == 0 {
		return name
	}
	idx := make([]string, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		idx[k] = fmt.Sprint(i%shape[k] + 1)
		i /= shape[k]
	}
	return name + "[" + strings.Join(idx, ",") + "]"
}

// normalRows are the rows of a Gaussian's elements: normal quantiles, or
// the constrained summary where the latent is constrained.
func normalRows(name, family string, shape []int, mean, sd []float64, c *Constrained, offset int, out []SummaryRow) []SummaryRow {
	for i := range mean {
		row := SummaryRow{Name: ElementName(name, shape, offset+i), Family: family, Mean: mean[i], SD: sd[i], HasSD: true, HasQuantiles: true}
		row.Q05, row.Q50, row.Q95 = mean[i]-1.6448536269514722*sd[i], mean[i], mean[i]+1.6448536269514722*sd[i]
		if c != nil && i < len(c.Mean) {
			row.Family = family + "/" + c.Transform
			row.Mean, row.SD, row.Q05, row.Q50, row.Q95 = c.Mean[i], c.SD[i], c.Q05[i], c.Q50[i], c.Q95[i]
		}
		out = append(out, row)
	}
	return out
}

// LatentRows are the rows of one latent's factor as a result writes it: a
// list of Gaussians (one per unit), a Gaussian, a scalar Normal, or a
// conjugate factor. A conjugate factor's quantiles, which take a numerical
// inversion each, are computed for its first need elements (rounded up to
// whole rows; 0: all): a topic model's topics have a million.
func LatentRows(name string, raw json.RawMessage, need int) ([]SummaryRow, error) {
	raw = bytes.TrimSpace(raw)
	var x any
	if len(raw) > 0 && raw[0] == '[' {
		x = new([]*Gaussian)
	} else {
		var head struct {
			Cov json.RawMessage `json:"cov"`
			SD  json.RawMessage `json:"sd"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, err
		}
		switch {
		case head.Cov != nil:
			x = new(Gaussian)
		case head.SD != nil:
			x = new(Normal)
		default:
			x = new(Factor)
		}
	}
	if err := json.Unmarshal(raw, x); err != nil {
		return nil, err
	}
	if gs, ok := x.(*[]*Gaussian); ok {
		x = *gs
	}
	return typedRows(name, x, need)
}

// scalarNormalRows is the row of a scalar latent's Normal.
func scalarNormalRows(name string, g *Normal) []SummaryRow {
	var c *Constrained
	if s := g.Constrained; s != nil {
		c = &Constrained{Transform: s.Transform, Mean: []float64{s.Mean}, SD: []float64{s.SD}, Q05: []float64{s.Q05}, Q50: []float64{s.Q50}, Q95: []float64{s.Q95}}
	}
	return normalRows(name, "Normal", nil, []float64{g.Mean}, []float64{g.SD}, c, 0, nil)
}

// factorRows are the rows of a conjugate factor, with quantiles for its
// first need elements (whole rows; 0: all).
func factorRows(name string, f *Factor, need int) ([]SummaryRow, error) {
	mean, sd, q, err := FactorMarginals(f.Family, f.Shape, f.Params, need)
	if err != nil {
		return nil, err
	}
	out := make([]SummaryRow, len(mean))
	for i := range mean {
		out[i] = SummaryRow{Name: ElementName(name, f.Shape, i), Family: f.Family, Mean: mean[i], SD: sd[i], HasSD: true}
		if i < len(q[0]) {
			out[i].Q05, out[i].Q50, out[i].Q95, out[i].HasQuantiles = q[0][i], q[1][i], q[2][i], true
		}
	}
	return out, nil
}
