package runtime

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// AddTraceGram is the Hessian of −½ log|−H(x)| for H linear in x,
// H(x) = −(A + Σ_i x_i B_i), where ∂H/∂x_i = −B_i: checked against second
// differences of the log-determinant.
func TestAddTraceGramIsTheHessianOfHalfLogDet(t *testing.T) {
	const p = 3
	rng := rand.New(rand.NewPCG(1, 2))
	sym := func(scale float64) []float64 {
		m := make([]float64, p*p)
		for i := 0; i < p; i++ {
			for j := i; j < p; j++ {
				v := scale * rng.NormFloat64()
				m[i*p+j], m[j*p+i] = v, v
			}
		}
		return m
	}
	a := sym(0.3)
	for i := 0; i < p; i++ {
		a[i*p+i] += 3
	}
	bs := make([]float64, p*p*p)
	for i := 0; i < p; i++ {
		copy(bs[i*p*p:], sym(0.5))
	}
	x := []float64{0.2, -0.1, 0.3}
	negH := func(x []float64) []float64 {
		m := append([]float64(nil), a...)
		for i := 0; i < p; i++ {
			for k := range m {
				m[k] += x[i] * bs[i*p*p+k]
			}
		}
		return m
	}
	phi := func(x []float64) float64 {
		ld, ok := LogDetSPD(negH(x), p)
		if !ok {
			t.Fatal("not positive definite")
		}
		return -ld / 2
	}
	sig := make([]float64, p*p)
	if !InvSPD(sig, negH(x), p) {
		t.Fatal("not positive definite")
	}
	dH := make([]float64, p*p*p)
	for k := range dH {
		dH[k] = -bs[k]
	}
	curv := make([]float64, p*p)
	AddTraceGram(curv, sig, dH, make([]float64, p*p*p), p)
	const h = 1e-4
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			at := func(di, dj float64) float64 {
				y := append([]float64(nil), x...)
				y[i] += di
				y[j] += dj
				return phi(y)
			}
			num := (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
			if math.Abs(num-curv[i*p+j]) > 1e-6 {
				t.Errorf("∂²/∂x%d∂x%d: %.9g, second differences %.9g", i+1, j+1, curv[i*p+j], num)
			}
		}
	}
}

func TestHashValues(t *testing.T) {
	a := HashValues([]int{1, 2}, []int{3})
	if a != HashValues([]int{1, 2}, []int{3}) {
		t.Error("not deterministic")
	}
	for _, other := range []string{HashValues([]int{1}, []int{2, 3}), HashValues([]float64{1, 2}, []int{3}), HashValues([]int{1, 2}, []int{4})} {
		if other == a {
			t.Errorf("collision with %s", other)
		}
	}
}

func TestCheckResume(t *testing.T) {
	saved := &Fingerprint{Data: map[string]string{"N": "1", "x": "a"}, Options: map[string]string{"method": "delta"}, Params: "p"}
	if err := CheckResume(saved, saved, "p"); err != nil {
		t.Errorf("same run: %v", err)
	}
	now := &Fingerprint{Data: map[string]string{"N": "1", "x": "b", "y": "c"}, Options: map[string]string{"method": "laplace"}}
	err := CheckResume(saved, now, "q")
	for _, want := range []string{"the values of x differ", "y is in the data but not in the checkpoint's", "method is laplace, the checkpoint was fitted with delta", "params are not the ones"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if err := CheckResume(nil, now, "p"); err == nil {
		t.Error("no fingerprint accepted")
	}
}

// A checkpoint of one model does not resume an edited one (a logit model's
// checkpoint once resumed a probit model, the ELBO trace mixing the two),
// nor one saved without the model's hash.
func TestCheckResumeModel(t *testing.T) {
	data, opts := map[string]string{"N": "1"}, map[string]string{"method": "laplace"}
	saved := (&Fingerprint{Data: data, Options: opts, Params: "p"}).OfModel("1111111111111111aaaa")
	now := (&Fingerprint{Data: data, Options: opts}).OfModel("2222222222222222bbbb")
	if err := CheckResume(saved, now, "p"); err == nil || !strings.Contains(err.Error(), "the model is not the one the checkpoint was fitted with (its source's sha256 is 222222222222…, the checkpoint's 111111111111…)") {
		t.Errorf("an edited model: %v", err)
	}
	old := &Fingerprint{Data: data, Options: opts, Params: "p"}
	if err := CheckResume(old, now, "p"); err == nil || !strings.Contains(err.Error(), "does not record the model") {
		t.Errorf("a checkpoint without the model's hash: %v", err)
	}
	if err := CheckResume(saved, (&Fingerprint{Data: data, Options: opts}).OfModel(saved.Model), "p"); err != nil {
		t.Errorf("the same model: %v", err)
	}
}
