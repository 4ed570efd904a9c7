package runtime

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// NonFinite walks v (structs, pointers, slices, arrays, maps with string
// keys) and returns the path of its first NaN or ±Inf float64, such as
// "Theta[3].Cov[1][2] = NaN", or "" if every number is finite. Map keys are
// visited in sorted order, so the answer is deterministic.
func NonFinite(v any) string {
	return nonFinite(reflect.ValueOf(v), "")
}

func nonFinite(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		if x := v.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprintf("%s = %v", strings.TrimPrefix(path, "."), x)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nonFinite(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				if p := nonFinite(v.Field(i), path+"."+t.Field(i).Name); p != "" {
					return p
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Float64 {
			x := v.Interface().([]float64) // the common case, without reflection per element
			if i := FirstNonFinite(x); i >= 0 {
				return fmt.Sprintf("%s[%d] = %v", strings.TrimPrefix(path, "."), i+1, x[i])
			}
			return ""
		}
		for i := 0; i < v.Len(); i++ {
			if p := nonFinite(v.Index(i), fmt.Sprintf("%s[%d]", path, i+1)); p != "" {
				return p
			}
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return ""
		}
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.String()
		}
		sort.Strings(names)
		for _, k := range names {
			if p := nonFinite(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())), fmt.Sprintf("%s[%q]", path, k)); p != "" {
				return p
			}
		}
	}
	return ""
}

// FirstNonFinite returns the index of the first NaN or ±Inf in x, or −1.
func FirstNonFinite(x []float64) int {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}

// stepNonFinite names the first of a step's results that is not finite:
// the state (as the model's NonFinite reports it), the params when checked,
// then the ELBO; "" when all are finite.
func stepNonFinite(state string, params any, checkParams bool, elbo float64) string {
	switch {
	case state != "":
		return state
	case checkParams && NonFinite(params) != "":
		return NonFinite(params)
	case math.IsNaN(elbo) || math.IsInf(elbo, 0):
		return fmt.Sprintf("the ELBO = %v", elbo)
	}
	return ""
}

// notFiniteStatus is the status of a run stopped because step n (an
// "iteration" or a "pass") gave bad, a stepNonFinite answer, with the
// trouble seen in that step.
func notFiniteStatus(bad string, tr Trouble, step string, n int) string {
	if len(tr) > 0 {
		bad += " (" + tr.String() + ")"
	}
	return fmt.Sprintf("not_finite: %s in %s %d; the result is the state after %s %d", bad, step, n, step, n-1)
}
