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
	// TEMPORARY (branch i16-oem, to be replaced by the lead's svi.go): a
	// minimal Stochastic for models whose only stepped globals are params.
	globals := false
	for _, qi := range f.qs {
		globals = globals || !qi.local
	}
	if stats, _ := f.sviParams(); stats != "" && !globals {
		f.p("\n// Stochastic describes what SVI steps: the params' online EM.\nfunc (a *caModel) Stochastic() runtime.SVIShape {\n\tm := a.m\n\ts := runtime.SVIShape{}\n\tif !a.opts.FixParams {\n\t\ts.ParamStats = %s\n\t}\n\treturn s\n}\n", stats)
	}
	f.emitSVIParams()
}
