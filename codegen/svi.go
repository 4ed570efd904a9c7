package codegen

import "strings"

// This file emits what stochastic variational inference (runtime.FitSVI)
// needs of a model besides coordinate ascent's kernels: caModel's
// Stochastic, the natural parameters of the conjugate global factors split
// into the prior's part and each unit's part (runtime.SVIGlobals), and the
// params' online EM (svi_params.go). A model SVI does not apply to gets
// NoSVI, saying why.

// sviReason says why SVI does not apply to the model, or "".
func (f *fitGen) sviReason() string {
	_, preason := f.sviParams()
	var why []string
	if f.unit == nil {
		why = append(why, "it has no unit plate (a loop `for d in 1:D` holding local latents) to draw minibatches from")
	}
	if preason != "" {
		why = append(why, preason)
	}
	return strings.Join(why, "; ")
}

// emitSVI prints the SVI side of caModel.
func (f *fitGen) emitSVI() {
	if why := f.sviReason(); why != "" {
		f.p("\n// NoSVI says why stochastic variational inference does not apply to the\n// model.\nfunc (a *caModel) NoSVI() string {\n\treturn %q\n}\n", why)
		return
	}
	f.emitSVIParams()
}
