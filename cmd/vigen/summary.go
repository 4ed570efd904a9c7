package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/runtime"
)

// summaryResult is what vigen summary reads of a result: the fields every
// generated package's runtime.Result writes, with the latents and params
// kept raw, in their order.
type summaryResult struct {
	Model       string               `json:"model"`
	Method      string               `json:"method"`
	Converged   bool                 `json:"converged"`
	Status      string               `json:"status"`
	Iterations  int                  `json:"iterations"`
	ELBO        []float64            `json:"elbo"`
	ELBONote    string               `json:"elbo_note"`
	Seconds     float64              `json:"seconds"`
	Latent      json.RawMessage      `json:"latent"`
	Params      json.RawMessage      `json:"params"`
	Unsettled   []int                `json:"unsettled"`
	Warning     string               `json:"warning"`
	Diagnostics []runtime.Diagnostic `json:"psis"`
	Omitted     []string             `json:"omitted"`
	Restarts    *runtime.Restarts    `json:"restarts"`
}

// summaryRow is one element of a latent or param.
type summaryRow struct {
	name, family            string
	mean, sd, q05, q50, q95 float64
	hasSD, hasQuantiles     bool
}

func cmdSummary(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rows := fs.Int("rows", 20, "rows printed per latent or param (0: all)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || *rows < 0 {
		fmt.Fprintln(stderr, "usage: vigen summary [-rows N] result.json")
		fs.PrintDefaults()
		return 2
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return 1
	}
	if err := writeSummary(stdout, b, *rows); err != nil {
		fmt.Fprintf(stderr, "vigen: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	return 0
}

// writeSummary prints the result b as a table, at most maxRows rows per
// latent or param (0: all): each element's family, mean, sd and 5%, 50%
// and 95% quantiles (on the constrained scale for a constrained latent),
// then the approximation diagnostics and what the result leaves out.
func writeSummary(w io.Writer, b []byte, maxRows int) error {
	var r summaryResult
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("not a vigen result: %v", err)
	}
	if r.Model == "" || r.Latent == nil {
		return errors.New("not a vigen result: no model or latent")
	}
	fmt.Fprintf(w, "model %s, method %s: %s after %d iterations (%.3g s)", r.Model, r.Method, r.Status, r.Iterations, r.Seconds)
	if n := len(r.ELBO); n > 0 {
		fmt.Fprintf(w, ", ELBO %.8g", r.ELBO[n-1])
		if n > 1 {
			fmt.Fprintf(w, " (last relative change %.2g)", runtime.RelChange(r.ELBO[n-2], r.ELBO[n-1]))
		}
	}
	fmt.Fprintln(w)
	var table [][]summaryRow
	latents, err := orderedObject(r.Latent)
	if err != nil {
		return fmt.Errorf("latent: %v", err)
	}
	for _, l := range latents {
		if string(l.raw) == "null" {
			continue // left out (-keep)
		}
		rs, err := latentRows(l.name, l.raw, maxRows)
		if err != nil {
			return fmt.Errorf("latent %s: %v", l.name, err)
		}
		table = append(table, rs)
	}
	if r.Params != nil && string(r.Params) != "null" {
		params, err := orderedObject(r.Params)
		if err != nil {
			return fmt.Errorf("params: %v", err)
		}
		for _, p := range params {
			var v any
			if err := json.Unmarshal(p.raw, &v); err != nil {
				return fmt.Errorf("param %s: %v", p.name, err)
			}
			var shape []int
			var flat []float64
			if err := flatten(v, 0, &shape, &flat); err != nil {
				return fmt.Errorf("param %s: %v", p.name, err)
			}
			var rs []summaryRow
			for i, x := range flat {
				rs = append(rs, summaryRow{name: elementName(p.name, shape, i), family: "param", mean: x})
			}
			table = append(table, rs)
		}
	}
	width := len("name")
	for _, rs := range table {
		for i, row := range rs {
			if maxRows > 0 && i >= maxRows {
				break
			}
			width = max(width, len([]rune(row.name)))
		}
	}
	fmt.Fprintf(w, "\n%-*s  %-12s %11s %11s %11s %11s %11s\n", width, "name", "family", "mean", "sd", "5%", "50%", "95%")
	num := func(x float64, ok bool) string {
		if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprintf("%11s", "")
		}
		return fmt.Sprintf("%11.4g", x)
	}
	for _, rs := range table {
		for i, row := range rs {
			if maxRows > 0 && i >= maxRows {
				fmt.Fprintf(w, "%-*s  (%d more; -rows 0 prints all)\n", width, "…", len(rs)-maxRows)
				break
			}
			line := fmt.Sprintf("%-*s  %-12s %s %s %s %s %s", width, row.name, row.family, num(row.mean, true), num(row.sd, row.hasSD),
				num(row.q05, row.hasQuantiles), num(row.q50, row.hasQuantiles), num(row.q95, row.hasQuantiles))
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	for _, rs := range table {
		if len(rs) > 0 && strings.Contains(rs[0].family, "/") {
			fmt.Fprintln(w, "(Normal/T: a Gaussian on the unconstrained scale, summarized on the latent's own through the transform T)")
			break
		}
	}
	if len(r.Diagnostics) > 0 || len(r.Omitted) > 0 || r.Warning != "" || len(r.Unsettled) > 0 || r.ELBONote != "" || r.Restarts != nil {
		fmt.Fprintln(w)
	}
	for _, d := range r.Diagnostics {
		if msg := d.Warning(); msg != "" {
			fmt.Fprintf(w, "warning: %s\n", msg)
		} else {
			fmt.Fprintf(w, "psis: %v\n", d)
		}
	}
	if len(r.Omitted) > 0 {
		fmt.Fprintf(w, "left out: %s (per-token; -keep keeps them)\n", strings.Join(r.Omitted, ", "))
	}
	if rs := r.Restarts; rs != nil && rs.Best >= 0 && rs.Best < len(rs.Seeds) {
		fmt.Fprintf(w, "restarts: %d seeds, kept seed %d (%s); the final ELBOs span %.4g\n", len(rs.Seeds), rs.Seeds[rs.Best], rs.Status[rs.Best], rs.Spread)
	}
	if len(r.Unsettled) > 0 {
		fmt.Fprintf(w, "unsettled units: %d (the first: %d)\n", len(r.Unsettled), r.Unsettled[0])
	}
	if r.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", r.Warning)
	}
	if r.ELBONote != "" {
		fmt.Fprintf(w, "note: %s\n", r.ELBONote)
	}
	return nil
}

// flatten appends the numbers of v, a number or a regular nested array of
// them, to flat in row-major order, recording the length of each level in
// shape (v at depth depth).
func flatten(v any, depth int, shape *[]int, flat *[]float64) error {
	switch x := v.(type) {
	case float64:
		*flat = append(*flat, x)
		return nil
	case []any:
		if depth == len(*shape) {
			*shape = append(*shape, len(x))
		} else if (*shape)[depth] != len(x) {
			return errors.New("a ragged array")
		}
		for _, e := range x {
			if err := flatten(e, depth+1, shape, flat); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("want numbers, got %T", v)
}

// namedRaw is one key of a JSON object and its value.
type namedRaw struct {
	name string
	raw  json.RawMessage
}

// orderedObject returns the keys of the JSON object b with their values,
// in the order written.
func orderedObject(b []byte) ([]namedRaw, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("want a JSON object")
	}
	var out []namedRaw
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
		out = append(out, namedRaw{key, raw})
	}
	return out, nil
}

// elementName is name with the 1-based indices of the i-th element of a
// row-major array of shape (none for a scalar).
func elementName(name string, shape []int, i int) string {
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
func normalRows(name, family string, shape []int, mean, sd []float64, c *runtime.Constrained, offset int, out []summaryRow) []summaryRow {
	for i := range mean {
		row := summaryRow{name: elementName(name, shape, offset+i), family: family, mean: mean[i], sd: sd[i], hasSD: true, hasQuantiles: true}
		row.q05, row.q50, row.q95 = mean[i]-1.6448536269514722*sd[i], mean[i], mean[i]+1.6448536269514722*sd[i]
		if c != nil && i < len(c.Mean) {
			row.family = family + "/" + c.Transform
			row.mean, row.sd, row.q05, row.q50, row.q95 = c.Mean[i], c.SD[i], c.Q05[i], c.Q50[i], c.Q95[i]
		}
		out = append(out, row)
	}
	return out
}

// latentRows are the rows of one latent's factor as a result writes it: a
// list of Gaussians (one per unit), a Gaussian, a scalar Normal, or a
// conjugate factor. A conjugate factor's quantiles, which take a numerical
// inversion each, are computed for its first need elements (rounded up to
// whole rows; 0: all): a topic model's topics have a million.
func latentRows(name string, raw json.RawMessage, need int) ([]summaryRow, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var gs []runtime.Gaussian
		if err := json.Unmarshal(raw, &gs); err != nil {
			return nil, err
		}
		var out []summaryRow
		for d, g := range gs {
			out = normalRows(name, "Normal", []int{len(gs), len(g.Mean)}, g.Mean, g.SD(), g.Constrained, d*len(g.Mean), out)
		}
		return out, nil
	}
	var head struct {
		Cov json.RawMessage `json:"cov"`
		SD  json.RawMessage `json:"sd"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	switch {
	case head.Cov != nil:
		var g runtime.Gaussian
		if err := json.Unmarshal(raw, &g); err != nil {
			return nil, err
		}
		return normalRows(name, "Normal", []int{len(g.Mean)}, g.Mean, g.SD(), g.Constrained, 0, nil), nil
	case head.SD != nil:
		var g runtime.Normal
		if err := json.Unmarshal(raw, &g); err != nil {
			return nil, err
		}
		var c *runtime.Constrained
		if s := g.Constrained; s != nil {
			c = &runtime.Constrained{Transform: s.Transform, Mean: []float64{s.Mean}, SD: []float64{s.SD}, Q05: []float64{s.Q05}, Q50: []float64{s.Q50}, Q95: []float64{s.Q95}}
		}
		return normalRows(name, "Normal", nil, []float64{g.Mean}, []float64{g.SD}, c, 0, nil), nil
	}
	var f runtime.Factor
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	mean, sd, err := factorMoments(f.Family, f.Shape, f.Params)
	if err != nil {
		return nil, err
	}
	conj := derive.Dists[f.Family].Conj
	var q [3][]float64
	if conj.Quantile != nil {
		p := make([][]float64, len(conj.Params))
		for j, n := range conj.Params {
			p[j] = f.Params[n]
		}
		k := 1
		if len(f.Shape) > 0 {
			k = f.Shape[len(f.Shape)-1]
		}
		// quantiles are inverted numerically: only for the first `need`
		// elements, whole rows of k
		m := len(mean)
		if need > 0 && k > 0 {
			m = min(m, (need+k-1)/k*k)
		}
		for j := range p {
			p[j] = p[j][:m]
		}
		for j, prob := range []float64{0.05, 0.5, 0.95} {
			q[j] = make([]float64, m)
			conj.Quantile(p, k, prob, q[j])
		}
	}
	out := make([]summaryRow, len(mean))
	for i := range mean {
		out[i] = summaryRow{name: elementName(name, f.Shape, i), family: f.Family, mean: mean[i], sd: sd[i], hasSD: true}
		if i < len(q[0]) {
			out[i].q05, out[i].q50, out[i].q95, out[i].hasQuantiles = q[0][i], q[1][i], q[2][i], true
		}
	}
	return out, nil
}
