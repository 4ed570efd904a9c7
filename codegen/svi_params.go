package codegen

// This file emits the params' side of stochastic variational inference:
// online EM (runtime.SVIParams), the M-steps taken from running averages
// of expected sufficient statistics.

// sviParams says how the params take part in SVI: statsLen is the Go
// expression (in terms of m, the Model) of the number of expected
// sufficient statistics of their M-steps, or "" without params; reason,
// if not "", says why the model's params have no online EM.
func (f *fitGen) sviParams() (statsLen, reason string) {
	if len(f.params()) == 0 {
		return "", ""
	}
	return "", "online EM of the params is not implemented yet"
}

// emitSVIParams prints caModel's UnitParamStats and ParamStep
// (runtime.SVIParams), called when sviParams gave a statsLen.
func (f *fitGen) emitSVIParams() {}
