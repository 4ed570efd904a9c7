package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

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
type summaryRow = runtime.SummaryRow

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
	code, err := writeSummary(stdout, b, *rows)
	if err != nil {
		fmt.Fprintf(stderr, "vigen: %s: %v\n", fs.Arg(0), err)
		return exitError
	}
	if code != exitConverged {
		_, why := fitEnding(b)
		fmt.Fprintf(stderr, "vigen: %s: %s\n", fs.Arg(0), why)
	}
	return code
}

// fitEnding says how the fit whose result is b ended, as vigen run's exit
// status does: exitConverged for a converged fit (or SVI's completed
// passes), exitNotConverged for one stopped at the iteration limit,
// exitFailed for any other (not_finite, canceled, trouble), with the
// warning that says what the result's values then are.
func fitEnding(b []byte) (code int, why string) {
	var r summaryResult
	if json.Unmarshal(b, &r) != nil {
		return exitError, ""
	}
	switch {
	case r.Converged || r.Status == runtime.PassesStatus || strings.HasPrefix(r.Status, runtime.PassesStatus+";"):
		return exitConverged, ""
	case r.Status == "max_iterations" || strings.HasPrefix(r.Status, "max_iterations: "):
		return exitNotConverged, fmt.Sprintf("the fit did not converge: it stopped at the iteration limit after %d iterations, and the result's values are those of its last iteration", r.Iterations)
	}
	what := fmt.Sprintf("the state after iteration %d", r.Iterations)
	if r.Iterations == 0 {
		what = "the state the fit started from"
	}
	return exitFailed, fmt.Sprintf("the fit failed (%s): the result's values are %s, not a posterior approximation", r.Status, what)
}

// writeSummary prints the result b as a table, at most maxRows rows per
// latent or param (0: all): each element's family, mean, sd and 5%, 50%
// and 95% quantiles (on the constrained scale for a constrained latent),
// then the approximation diagnostics and what the result leaves out. A
// fit that did not converge is said so before the table; the status
// returned is fitEnding's.
func writeSummary(w io.Writer, b []byte, maxRows int) (int, error) {
	var r summaryResult
	if err := json.Unmarshal(b, &r); err != nil {
		return exitError, fmt.Errorf("not a vigen result: %v", err)
	}
	if r.Model == "" || r.Latent == nil {
		return exitError, errors.New("not a vigen result: no model or latent")
	}
	fmt.Fprintf(w, "model %s, method %s: %s after %d iterations (%.3g s)", r.Model, r.Method, r.Status, r.Iterations, r.Seconds)
	if n := len(r.ELBO); n > 0 {
		fmt.Fprintf(w, ", ELBO %.8g", r.ELBO[n-1])
		if n > 1 {
			fmt.Fprintf(w, " (last relative change %.2g)", runtime.RelChange(r.ELBO[n-2], r.ELBO[n-1]))
		}
	}
	fmt.Fprintln(w)
	code, why := fitEnding(b)
	if why != "" {
		fmt.Fprintf(w, "warning: %s\n", why)
	}
	var table [][]summaryRow
	latents, err := runtime.OrderedObject(r.Latent)
	if err != nil {
		return exitError, fmt.Errorf("latent: %v", err)
	}
	for _, l := range latents {
		if string(l.Raw) == "null" {
			continue // left out (-keep)
		}
		rs, err := runtime.LatentRows(l.Name, l.Raw, maxRows)
		if err != nil {
			return exitError, fmt.Errorf("latent %s: %v", l.Name, err)
		}
		table = append(table, rs)
	}
	if r.Params != nil && string(r.Params) != "null" {
		params, err := runtime.OrderedObject(r.Params)
		if err != nil {
			return exitError, fmt.Errorf("params: %v", err)
		}
		for _, p := range params {
			var v any
			if err := json.Unmarshal(p.Raw, &v); err != nil {
				return exitError, fmt.Errorf("param %s: %v", p.Name, err)
			}
			var shape []int
			var flat []float64
			if err := flatten(v, 0, &shape, &flat); err != nil {
				return exitError, fmt.Errorf("param %s: %v", p.Name, err)
			}
			var rs []summaryRow
			for i, x := range flat {
				rs = append(rs, summaryRow{Name: runtime.ElementName(p.Name, shape, i), Family: "param", Mean: x})
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
			width = max(width, len([]rune(row.Name)))
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
			line := fmt.Sprintf("%-*s  %-12s %s %s %s %s %s", width, row.Name, row.Family, num(row.Mean, true), num(row.SD, row.HasSD),
				num(row.Q05, row.HasQuantiles), num(row.Q50, row.HasQuantiles), num(row.Q95, row.HasQuantiles))
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	for _, rs := range table {
		if len(rs) > 0 && strings.Contains(rs[0].Family, "/") {
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
	return code, nil
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
