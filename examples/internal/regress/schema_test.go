package regress

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/golden"
)

// TestResultsMatchSchema: every example's result, by each method, and the
// topic models' default results (per-token latents left out) and one with
// restarts, validate against runtime/result.schema.json; and results broken
// in small ways do not.
func TestResultsMatchSchema(t *testing.T) {
	golden.SlowTier(t)
	schema := loadSchema(t)
	var names []string
	for name := range examples {
		names = append(names, name)
	}
	sort.Strings(names)
	check := func(what string, r any) {
		t.Helper()
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		json.Unmarshal(b, &v)
		if err := schema.validate(v, "$"); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	for _, name := range names {
		for _, method := range []string{"laplace", "delta"} {
			r, err := examples[name](context.Background(), "../../"+name+"/data.json", method)
			if err != nil {
				t.Fatalf("%s/%s: %v", name, method, err)
			}
			check(name+"/"+method, r)
		}
	}
	f, _ := os.Open("../../lda/data.json")
	d, err := lda.LoadData(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	lean, err := lda.Fit(context.Background(), d, lda.Options{MaxIter: 5, Restarts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if lean.Latent.Z != nil || lean.Restarts == nil || len(lean.Diagnostics) != 0 {
		t.Fatalf("lda: z kept %v, restarts %v", lean.Latent.Z != nil, lean.Restarts)
	}
	check("lda, z left out, 2 restarts", lean)
	f, _ = os.Open("../../ctm/data.json")
	cd, err := ctm.LoadData(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	cr, err := ctm.Fit(context.Background(), cd, ctm.Options{MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	check("ctm, z left out", cr)

	// broken results are refused, each for its own reason
	b, _ := json.Marshal(cr)
	for _, c := range []struct{ from, to, want string }{
		{`"model":"ctm"`, `"model":3`, "$.model: want string"},
		{`"converged":false`, `"converged":false,"extra":1`, `$: unknown property "extra"`},
		{`"family":"MvNormal"`, `"family":"MvNormal","sd":1`, "$.latent.theta"},
		{`"draws":1000`, `"draws":10`, "$.psis[0].draws: 10 is below 25"},
	} {
		s := strings.Replace(string(b), c.from, c.to, 1)
		if s == string(b) {
			t.Fatalf("%q is not in the result", c.from)
		}
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.validate(v, "$"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
}

// jsonSchema is the part of JSON Schema (2020-12) result.schema.json uses:
// type, enum, properties, required, additionalProperties, items, oneOf,
// minimum and $ref to $defs.
type jsonSchema struct {
	root map[string]any
}

func loadSchema(t *testing.T) *jsonSchema {
	b, err := os.ReadFile("../../../runtime/result.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatalf("result.schema.json: %v", err)
	}
	return &jsonSchema{root}
}

func (s *jsonSchema) validate(v any, path string) error { return s.check(s.root, v, path) }

func (s *jsonSchema) check(sch map[string]any, v any, path string) error {
	if ref, ok := sch["$ref"].(string); ok {
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		def, _ := s.root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok || def == nil {
			return fmt.Errorf("%s: unknown $ref %s", path, ref)
		}
		return s.check(def, v, path)
	}
	if types, ok := sch["type"]; ok {
		var list []any
		if l, ok := types.([]any); ok {
			list = l
		} else {
			list = []any{types}
		}
		match := false
		for _, ty := range list {
			match = match || isType(v, ty.(string))
		}
		if !match {
			return fmt.Errorf("%s: want %v, got %T", path, joinTypes(list), v)
		}
	}
	if enum, ok := sch["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			return fmt.Errorf("%s: %v is not one of %v", path, v, enum)
		}
	}
	if minimum, ok := sch["minimum"].(float64); ok {
		if x, ok := v.(float64); ok && x < minimum {
			return fmt.Errorf("%s: %v is below %v", path, x, minimum)
		}
	}
	if alts, ok := sch["oneOf"].([]any); ok {
		var matched []int
		var errs []string
		for i, a := range alts {
			if err := s.check(a.(map[string]any), v, path); err == nil {
				matched = append(matched, i)
			} else {
				errs = append(errs, err.Error())
			}
		}
		if len(matched) != 1 {
			return fmt.Errorf("%s: matches %d of oneOf's alternatives, want 1 (%s)", path, len(matched), strings.Join(errs, "; "))
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := sch["properties"].(map[string]any)
		for _, r := range asList(sch["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: missing %q", path, r)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := props[k].(map[string]any); ok {
				if err := s.check(p, obj[k], path+"."+k); err != nil {
					return err
				}
				continue
			}
			switch extra := sch["additionalProperties"].(type) {
			case bool:
				if !extra {
					return fmt.Errorf("%s: unknown property %q", path, k)
				}
			case map[string]any:
				if err := s.check(extra, obj[k], path+"."+k); err != nil {
					return err
				}
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := sch["items"].(map[string]any); ok {
			for i, e := range arr {
				if err := s.check(items, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func joinTypes(list []any) string {
	var s []string
	for _, t := range list {
		s = append(s, t.(string))
	}
	return strings.Join(s, " or ")
}

// isType says whether the decoded JSON value v is of the schema type ty.
func isType(v any, ty string) bool {
	switch ty {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		x, ok := v.(float64)
		return ok && x == math.Trunc(x)
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}
