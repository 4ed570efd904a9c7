package runtime

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestResultJSONSchema: the JSON of a Result keeps the field names and
// order every generated package wrote before Result moved into runtime.
func TestResultJSONSchema(t *testing.T) {
	type latent struct {
		X int `json:"x"`
	}
	type params struct{}
	r := NewResult("m", "laplace", Run{Converged: true, Status: "converged", Iterations: 2, ELBO: []float64{-2, -1},
		Seconds: 0.5, Unsettled: []int{3}}, latent{X: 1}, params{}, &Fingerprint{Data: map[string]string{"y": "h"}})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","method":"laplace","converged":true,"status":"converged","iterations":2,"elbo":[-2,-1],` +
		`"seconds":0.5,"latent":{"x":1},"params":{},"unsettled":[3],"fingerprint":{`
	if !strings.HasPrefix(string(b), want) {
		t.Errorf("JSON\n%s\nwant prefix\n%s", b, want)
	}
	back, err := LoadResult[latent, params](strings.NewReader(string(b)), "m")
	if err != nil || back.Latent.X != 1 || back.Fingerprint == nil {
		t.Errorf("LoadResult = %+v, %v", back, err)
	}
	if _, err := LoadResult[latent, params](strings.NewReader(string(b)), "other"); err == nil {
		t.Error("LoadResult accepted a result of another model")
	}
}

func TestSettingsPrepareAndCA(t *testing.T) {
	type latent struct{}
	type params struct{}
	s := Settings[latent, params]{Tol: 1e-3}
	if err := s.Prepare("m"); err != nil {
		t.Fatal(err)
	}
	if s.MaxIter != DefaultMaxIter || s.Tol != 1e-3 || s.LocalTol != DefaultLocalTol {
		t.Errorf("Prepare left %+v", s)
	}
	fp := &Fingerprint{Data: map[string]string{"y": "h"}}
	saved := NewResult("m", "laplace", Run{Iterations: 1, ELBO: []float64{-1}, Unsettled: []int{2}}, latent{}, params{}, fp)
	s = Settings[latent, params]{Resume: saved}
	if err := s.Prepare("other"); err == nil || !strings.Contains(err.Error(), `of model "m", not other`) {
		t.Errorf("Prepare of another model's run: %v", err)
	}
	if err := s.Prepare("m"); err != nil || s.Start != saved {
		t.Fatalf("Prepare: %v, Start %p want %p", err, s.Start, saved)
	}
	now := time.Now()
	c, err := s.CA(now, fp)
	if err != nil {
		t.Fatal(err)
	}
	if c.Resume == nil || c.Resume.Iterations != 1 || len(c.Resume.Unsettled) != 1 || !c.Start.Equal(now) || c.MaxIter != DefaultMaxIter {
		t.Errorf("CA = %+v", c)
	}
	if _, err := s.CA(now, &Fingerprint{Data: map[string]string{"y": "other"}}); err == nil {
		t.Error("CA resumed a run under another fingerprint")
	}
}
