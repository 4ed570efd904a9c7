package derive

import "testing"

// TestDeltaDerivedOnUse: Derive leaves the delta method's third
// derivatives (Trace, TraceGrad) underived, since a latent whose package
// has no delta kernels never needs them; they are derived on first use,
// for the objective and each of its parts, and equal the contraction
// Σ_ab Hess_ab Σ_ab written out here.
func TestDeltaDerivedOnUse(t *testing.T) {
	d, err := Derive(logregModel())
	if err != nil {
		t.Fatal(err)
	}
	o := d.Objectives[0]
	if o.trace != nil || o.traceGrad != nil {
		t.Fatal("Derive derived the delta terms before they were asked for")
	}
	for _, p := range o.Parts {
		if p.trace != nil {
			t.Fatal("Derive derived a part's delta terms before they were asked for")
		}
	}
	tr := o.Trace()
	if o.traceGrad == nil || o.TraceGrad() == nil {
		t.Fatal("TraceGrad not derived with Trace")
	}
	var parts []Expr
	for _, p := range o.Parts {
		if p.Trace(o) == nil || p.TraceGrad(o) == nil {
			t.Fatal("a part's delta terms were not derived")
		}
		parts = append(parts, p.Trace(o))
	}
	if Add(parts...).Key() != tr.Key() {
		t.Error("Trace is not the sum of its parts' traces")
	}
	ta, tb := o.ta, o.tb
	want := Sum([]Index{ta, tb}, Mul(Subst(Subst(o.Hess, o.A, ta), o.B, tb), TSym(o.CovName, IxE(ta), IxE(tb))))
	if want.Key() != tr.Key() {
		t.Errorf("Trace = %s, want Σ_ab Hess_ab Σ_ab = %s", String(tr), String(want))
	}
}
