// Package regress records the full Result of every example's Fit on its
// bundled data, for each method, as a SHA-256 of its JSON (with the
// wall-clock Seconds zeroed), so that a refactoring of the fit driver can
// show that it changes no number. go test -update rewrites the hashes.
package regress

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ar2/ar2"
	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/examples/eightschools/eightschools"
	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/examples/hlm/hlm"
	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/examples/logreg/logreg"
	"github.com/vigen-go/vigen/examples/pumps/pumps"
	"github.com/vigen-go/vigen/examples/schoolreg/schoolreg"
	"github.com/vigen-go/vigen/golden"
)

var (
	update  = flag.Bool("update", false, "rewrite testdata/results.sha256")
	dump    = flag.String("dump", "", "also write each Result's JSON into this directory (NAME_METHOD.json)")
	against = flag.String("against", "", "compare each Result with the one -dump wrote into this directory: every number within -reltol, every other value equal (the hashes are then not checked)")
	relTol  = flag.Float64("reltol", 1e-10, "with -against, the largest relative difference |a−b|/max(|a|,|b|,1) allowed")
)

const hashFile = "testdata/results.sha256"

// fitter fits one example on its bundled data with the given method and
// returns the Result with its Seconds zeroed.
type fitter func(ctx context.Context, path, method string) (any, error)

// fitOf adapts a generated package's LoadData and Fit.
func fitOf[D, O, R any](load func(*os.File) (D, error), fit func(context.Context, D, O) (*R, error),
	opts func(method string) O, zero func(*R)) fitter {
	return func(ctx context.Context, path, method string) (any, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		d, err := load(f)
		if err != nil {
			return nil, err
		}
		r, err := fit(ctx, d, opts(method))
		if err != nil {
			return nil, err
		}
		zero(r)
		return r, nil
	}
}

// The examples. Every fit runs with default Options but for Method; none
// needs an iteration cap (each converges on its bundled data in well under
// a second, or, as eightschools with the delta method, stops at the
// default limit of 1000 iterations within a second).
var examples = map[string]fitter{
	"ar2": fitOf(func(f *os.File) (*ar2.Data, error) { return ar2.LoadData(f) }, ar2.Fit,
		func(m string) ar2.Options { return ar2.Options{Method: m} }, func(r *ar2.Result) { r.Seconds = 0 }),
	"eightschools": fitOf(func(f *os.File) (*eightschools.Data, error) { return eightschools.LoadData(f) }, eightschools.Fit,
		func(m string) eightschools.Options { return eightschools.Options{Method: m} }, func(r *eightschools.Result) { r.Seconds = 0 }),
	"pumps": fitOf(func(f *os.File) (*pumps.Data, error) { return pumps.LoadData(f) }, pumps.Fit,
		func(m string) pumps.Options { return pumps.Options{Method: m} }, func(r *pumps.Result) { r.Seconds = 0 }),
	"schoolreg": fitOf(func(f *os.File) (*schoolreg.Data, error) { return schoolreg.LoadData(f) }, schoolreg.Fit,
		func(m string) schoolreg.Options { return schoolreg.Options{Method: m} }, func(r *schoolreg.Result) { r.Seconds = 0 }),
	"ctm": fitOf(func(f *os.File) (*ctm.Data, error) { return ctm.LoadData(f) }, ctm.Fit,
		func(m string) ctm.Options { return ctm.Options{Method: m, Keep: []string{"all"}} }, func(r *ctm.Result) { r.Seconds = 0 }),
	"hierlogreg": fitOf(func(f *os.File) (*hierlogreg.Data, error) { return hierlogreg.LoadData(f) }, hierlogreg.Fit,
		func(m string) hierlogreg.Options { return hierlogreg.Options{Method: m} }, func(r *hierlogreg.Result) { r.Seconds = 0 }),
	"hlm": fitOf(func(f *os.File) (*hlm.Data, error) { return hlm.LoadData(f) }, hlm.Fit,
		func(m string) hlm.Options { return hlm.Options{Method: m} }, func(r *hlm.Result) { r.Seconds = 0 }),
	"lda": fitOf(func(f *os.File) (*lda.Data, error) { return lda.LoadData(f) }, lda.Fit,
		func(m string) lda.Options { return lda.Options{Method: m, Keep: []string{"all"}} }, func(r *lda.Result) { r.Seconds = 0 }),
	"logreg": fitOf(func(f *os.File) (*logreg.Data, error) { return logreg.LoadData(f) }, logreg.Fit,
		func(m string) logreg.Options { return logreg.Options{Method: m} }, func(r *logreg.Result) { r.Seconds = 0 }),
}

// TestResultsUnchanged compares the hash of each example's Result with the
// one recorded in testdata/results.sha256.
func TestResultsUnchanged(t *testing.T) {
	golden.SlowTier(t)
	want, err := readHashes()
	if err != nil && !*update {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	got := map[string]string{}
	var names []string
	for name := range examples {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, method := range []string{"laplace", "delta"} {
			key := name + "/" + method
			r, err := examples[name](context.Background(), "../../"+name+"/data.json", method)
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var head struct {
				Status     string `json:"status"`
				Iterations int    `json:"iterations"`
			}
			json.Unmarshal(b, &head)
			t.Logf("%s: %s after %d iterations", key, head.Status, head.Iterations)
			sum := sha256.Sum256(b)
			got[key] = hex.EncodeToString(sum[:])
			file := name + "_" + method + ".json"
			if *dump != "" {
				if err := os.WriteFile(filepath.Join(*dump, file), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if *against != "" {
				old, err := os.ReadFile(filepath.Join(*against, file))
				if err != nil {
					t.Fatal(err)
				}
				d, err := compareJSON(old, b, *relTol)
				if err != nil {
					t.Errorf("%s: %v", key, err)
				}
				t.Logf("%s: largest relative difference %.3g", key, d)
				continue
			}
			if !*update && got[key] != want[key] {
				t.Errorf("%s: the Result changed: sha256 %s, recorded %s", key, got[key], want[key])
			}
		}
	}
	if *against != "" {
		return
	}
	if *update {
		if err := writeHashes(got); err != nil {
			t.Fatal(err)
		}
		return
	}
	for key := range want {
		if _, ok := got[key]; !ok {
			t.Errorf("%s: recorded but no longer fitted", key)
		}
	}
}

func readHashes() (map[string]string, error) {
	f, err := os.Open(hashFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		hash, key, ok := strings.Cut(line, "  ")
		if !ok {
			return nil, fmt.Errorf("%s: bad line %q", hashFile, line)
		}
		m[key] = hash
	}
	return m, sc.Err()
}

func writeHashes(m map[string]string) error {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# sha256 of each example's Result JSON (Seconds zeroed), default Options\n")
	b.WriteString("# but Method; written by go test ./examples/internal/regress -update\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s  %s\n", m[k], k)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		return err
	}
	return os.WriteFile(hashFile, []byte(b.String()), 0o644)
}

// compareJSON compares two Results' JSON value by value: numbers within
// relative tolerance tol (|a−b| ≤ tol·max(|a|, |b|, 1)), everything else
// equal but the fingerprint of the params (a hash of estimated values,
// which moves with their last bits). It returns the largest relative difference of the numbers and an
// error naming the first value out of tolerance.
func compareJSON(old, cur []byte, tol float64) (float64, error) {
	var a, b any
	if err := json.Unmarshal(old, &a); err != nil {
		return 0, err
	}
	if err := json.Unmarshal(cur, &b); err != nil {
		return 0, err
	}
	worst := 0.0
	var walk func(path string, a, b any) error
	walk = func(path string, a, b any) error {
		switch a := a.(type) {
		case float64:
			bv, ok := b.(float64)
			if !ok {
				return fmt.Errorf("%s: %v became %v", path, a, b)
			}
			d := math.Abs(a-bv) / math.Max(math.Max(math.Abs(a), math.Abs(bv)), 1)
			worst = math.Max(worst, d)
			if d > tol {
				return fmt.Errorf("%s: %v became %v (relative difference %.3g > %.3g)", path, a, bv, d, tol)
			}
		case map[string]any:
			bm, ok := b.(map[string]any)
			if !ok || len(bm) != len(a) {
				return fmt.Errorf("%s: the object's keys changed", path)
			}
			keys := make([]string, 0, len(a))
			for k := range a {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if path+"."+k == "$.fingerprint.params" {
					continue
				}
				if err := walk(path+"."+k, a[k], bm[k]); err != nil {
					return err
				}
			}
		case []any:
			bs, ok := b.([]any)
			if !ok || len(bs) != len(a) {
				return fmt.Errorf("%s: the array's length changed", path)
			}
			for k := range a {
				if err := walk(fmt.Sprintf("%s[%d]", path, k), a[k], bs[k]); err != nil {
					return err
				}
			}
		default:
			if fmt.Sprint(a) != fmt.Sprint(b) {
				return fmt.Errorf("%s: %v became %v", path, a, b)
			}
		}
		return nil
	}
	err := walk("$", a, b)
	return worst, err
}
