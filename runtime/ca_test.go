package runtime

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeState is the variational state of fakeModel: one local value per
// unit and one global.
type fakeState struct {
	x []float64
	g float64
}

// fakeResult is fakeModel's result, in JSON as a checkpoint.
type fakeResult struct {
	Converged  bool      `json:"converged"`
	Status     string    `json:"status"`
	Iterations int       `json:"iterations"`
	ELBO       []float64 `json:"elbo"`
	Seconds    float64   `json:"seconds"`
	Unsettled  []int     `json:"unsettled,omitempty"`
	X          []float64 `json:"x"`
	G          float64   `json:"g"`
	B          float64   `json:"b"`
}

// fakeModel is a small model for FitCA's tests: unit d's local value moves
// halfway toward y[d] + g + b in each sweep and settles when the move is
// small; the global g is pulled toward the mean of the x; the param b is
// set by an M-step. Its fixed point is reached geometrically, over tens of
// iterations. Hooks let a test act at a given iteration.
type fakeModel struct {
	y      []float64
	b      float64
	em     bool
	iter   int               // UpdateGlobals calls so far
	nanAt  int               // UpdateGlobals makes g NaN in this iteration
	onUnit func(iter, d int) // called before each unit's update
}

type fakeWorker struct{ tr Trouble }

func (m *fakeModel) Shape(q *fakeState) CAShape {
	return CAShape{Units: len(m.y), Globals: true, EM: m.em}
}

func (m *fakeModel) NewWorker(tr Trouble) *fakeWorker { return &fakeWorker{tr} }

func (m *fakeModel) UpdateUnit(q *fakeState, w *fakeWorker, d int) bool {
	if m.onUnit != nil {
		m.onUnit(m.iter+1, d)
	}
	for sweep := 0; sweep < 3; sweep++ {
		prev := q.x[d]
		q.x[d] += 0.5 * (m.y[d] + 0.5*q.g + m.b - q.x[d])
		if math.Abs(q.x[d]-prev) < 1e-3 {
			return true
		}
	}
	if d%7 == 0 {
		w.tr.Add("x: slow")
	}
	return false
}

func (m *fakeModel) UpdateGlobals(q *fakeState, w *fakeWorker) float64 {
	m.iter++
	s := 0.0
	for _, v := range q.x {
		s += v
	}
	prev := q.g
	q.g = 0.3*q.g + 0.2*s/float64(len(q.x))
	if m.iter == m.nanAt {
		q.g = math.NaN()
	}
	return math.Abs(q.g-prev) / math.Max(math.Abs(prev), 1)
}

func (m *fakeModel) MStep(q *fakeState) (float64, error) {
	prev := m.b
	m.b = 0.5 * m.b
	for d, v := range q.x {
		m.b += 1e-3 * (v - m.y[d])
	}
	return math.Abs(m.b-prev) / math.Max(math.Abs(prev), 1), nil
}

func (m *fakeModel) ELBO(q *fakeState, workers int, perUnit []float64) float64 {
	ParallelFor(len(m.y), workers, func(_, d int) {
		r := q.x[d] - m.y[d] - m.b
		perUnit[d] = -r * r
	})
	total := 0.0 // g is left out, so that a NaN g is caught by NonFinite
	for _, v := range perUnit {
		total += v
	}
	return total
}

func (m *fakeModel) Copy(dst, src *fakeState) *fakeState {
	if dst == nil {
		dst = new(fakeState)
	}
	dst.x = append(dst.x[:0], src.x...)
	dst.g = src.g
	return dst
}

func (m *fakeModel) NonFinite(q *fakeState) string {
	if i := FirstNonFinite(q.x); i >= 0 {
		return "x"
	}
	if math.IsNaN(q.g) || math.IsInf(q.g, 0) {
		return "g"
	}
	return ""
}

func (m *fakeModel) Params() float64 { return m.b }

func (m *fakeModel) Result(run Run, q *fakeState, b float64) *fakeResult {
	return &fakeResult{Converged: run.Converged, Status: run.Status, Iterations: run.Iterations, ELBO: run.ELBO,
		Seconds: run.Seconds, Unsettled: run.Unsettled, X: append([]float64(nil), q.x...), G: q.g, B: b}
}

func newFake(units int) (*fakeModel, *fakeState) {
	m := &fakeModel{em: true}
	q := &fakeState{x: make([]float64, units), g: 1}
	for d := range units {
		m.y = append(m.y, math.Sin(float64(d))*float64(d%5))
	}
	return m, q
}

func fitFake(t *testing.T, ctx context.Context, m *fakeModel, q *fakeState, s CASettings) *fakeResult {
	t.Helper()
	r, err := FitCA(ctx, CAModel[*fakeState, *fakeWorker, float64, *fakeResult](m), q, s)
	if err != nil {
		t.Fatal(err)
	}
	r.Seconds = 0
	return r
}

func TestFitCAConverges(t *testing.T) {
	m, q := newFake(40)
	var its []int
	r := fitFake(t, context.Background(), m, q, CASettings{Progress: func(p Progress) { its = append(its, p.Iteration) }})
	if !r.Converged || r.Status != "converged" {
		t.Fatalf("status %q after %d iterations", r.Status, r.Iterations)
	}
	if r.Iterations < 10 || len(r.ELBO) != r.Iterations || len(its) != r.Iterations {
		t.Fatalf("%d iterations, %d ELBO values, %d progress calls", r.Iterations, len(r.ELBO), len(its))
	}
}

func TestFitCAMaxIterNamesCriteria(t *testing.T) {
	m, q := newFake(40)
	r := fitFake(t, context.Background(), m, q, CASettings{Convergence: Convergence{MaxIter: 3}})
	if r.Converged || r.Iterations != 3 || !strings.HasPrefix(r.Status, "max_iterations: ") || !strings.Contains(r.Status, "ELBO relative change") {
		t.Fatalf("status %q after %d iterations", r.Status, r.Iterations)
	}
}

// TestFitCADeterministic: the result does not depend on the number of
// workers.
func TestFitCADeterministic(t *testing.T) {
	var want *fakeResult
	// 1 << 40 workers: capped at the number of units, not allocated
	for _, w := range []int{1, 2, 3, 8, 1 << 40} {
		m, q := newFake(57)
		got := fitFake(t, context.Background(), m, q, CASettings{Workers: w})
		if want == nil {
			want = got
		} else if !reflect.DeepEqual(got, want) {
			t.Fatalf("workers %d: result differs from workers 1", w)
		}
	}
}

// TestFitCACancel cancels at the top of iteration 3 and inside its E-step:
// either way the result is the state after iteration 2.
func TestFitCACancel(t *testing.T) {
	m0, q0 := newFake(30)
	want := fitFake(t, context.Background(), m0, q0, CASettings{Convergence: Convergence{MaxIter: 2}})
	for _, inside := range []bool{false, true} {
		m, q := newFake(30)
		ctx, cancel := context.WithCancel(context.Background())
		s := CASettings{Workers: 1}
		if inside {
			m.onUnit = func(it, d int) {
				if it == 3 && d == 10 {
					cancel()
				}
			}
		} else {
			s.Progress = func(p Progress) {
				if p.Iteration == 2 {
					cancel()
				}
			}
		}
		got := fitFake(t, ctx, m, q, s)
		cancel()
		if got.Status != "canceled" || got.Iterations != 2 {
			t.Fatalf("inside %v: status %q after %d iterations", inside, got.Status, got.Iterations)
		}
		if inside && q.x[5] == want.X[5] {
			t.Fatal("the canceled iteration did not start")
		}
		got.Status, got.Converged = want.Status, want.Converged
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("inside %v: the canceled run's result is not the state after iteration 2:\n%+v\n%+v", inside, got, want)
		}
	}
}

// TestFitCANaNRollback: an iteration whose global becomes NaN is
// discarded, and the status names it.
func TestFitCANaNRollback(t *testing.T) {
	m0, q0 := newFake(30)
	want := fitFake(t, context.Background(), m0, q0, CASettings{Convergence: Convergence{MaxIter: 4}})
	m, q := newFake(30)
	m.nanAt = 5
	got := fitFake(t, context.Background(), m, q, CASettings{})
	if !strings.HasPrefix(got.Status, "not_finite: g (") || !strings.HasSuffix(got.Status, ") in iteration 5; the result is the state after iteration 4") {
		t.Fatalf("status %q", got.Status)
	}
	got.Status, got.Converged = want.Status, want.Converged
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the result is not the state after iteration 4:\n%+v\n%+v", got, want)
	}
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), "NaN") {
		t.Fatal(string(b))
	}
}

// TestFitCAResume: a run continued from a checkpoint ends bit-identical to
// an uninterrupted one.
func TestFitCAResume(t *testing.T) {
	m0, q0 := newFake(30)
	want := fitFake(t, context.Background(), m0, q0, CASettings{Workers: 2})
	path := filepath.Join(t.TempDir(), "cp.json")
	m1, q1 := newFake(30)
	first := fitFake(t, context.Background(), m1, q1, CASettings{Convergence: Convergence{MaxIter: 7}, Checkpoint: Checkpoint{Path: path, Every: 3}})
	if first.Iterations != 7 {
		t.Fatalf("%d iterations", first.Iterations)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cp fakeResult
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatal(err)
	}
	if cp.Status != CheckpointStatus || cp.Iterations != 6 {
		t.Fatalf("checkpoint: status %q after %d iterations", cp.Status, cp.Iterations)
	}
	m, q := newFake(30)
	m.b, q.x, q.g = cp.B, cp.X, cp.G
	got := fitFake(t, context.Background(), m, q, CASettings{Workers: 3,
		Resume: &Run{Iterations: cp.Iterations, ELBO: cp.ELBO, Seconds: cp.Seconds, Unsettled: cp.Unsettled}})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed run differs:\n%+v\n%+v", got, want)
	}
}

func TestFitCAResumeErrors(t *testing.T) {
	for _, r := range []*Run{{Iterations: 2, ELBO: []float64{1}}, {Iterations: 1, ELBO: []float64{1}, Unsettled: []int{31}}} {
		m, q := newFake(30)
		_, err := FitCA(context.Background(), CAModel[*fakeState, *fakeWorker, float64, *fakeResult](m), q, CASettings{Resume: r})
		if err == nil || !strings.HasPrefix(err.Error(), "resume: ") {
			t.Fatalf("%+v: err %v", r, err)
		}
	}
}

// withoutParams is fakeModel without CAParams: MStep and Params hidden.
type withoutParams struct{ m *fakeModel }

func (w withoutParams) Shape(q *fakeState) CAShape       { return w.m.Shape(q) }
func (w withoutParams) NewWorker(tr Trouble) *fakeWorker { return w.m.NewWorker(tr) }
func (w withoutParams) UpdateUnit(q *fakeState, k *fakeWorker, d int) bool {
	return w.m.UpdateUnit(q, k, d)
}
func (w withoutParams) UpdateGlobals(q *fakeState, k *fakeWorker) float64 {
	return w.m.UpdateGlobals(q, k)
}
func (w withoutParams) ELBO(q *fakeState, n int, pu []float64) float64 { return w.m.ELBO(q, n, pu) }
func (w withoutParams) Copy(dst, src *fakeState) *fakeState            { return w.m.Copy(dst, src) }
func (w withoutParams) NonFinite(q *fakeState) string                  { return w.m.NonFinite(q) }
func (w withoutParams) Result(run Run, q *fakeState, b float64) *fakeResult {
	return w.m.Result(run, q, b)
}

// A model without params needs no M-step or Params (its result's params
// are zero), but one that says it estimates params must have them.
func TestFitCAWithoutParams(t *testing.T) {
	m, q := newFake(10)
	m.b, m.em = 3, false
	r, err := FitCA(context.Background(), CAModel[*fakeState, *fakeWorker, float64, *fakeResult](withoutParams{m}), q, CASettings{})
	if err != nil {
		t.Fatalf("without params: %v", err)
	}
	if !r.Converged || r.B != 0 {
		t.Errorf("without params: %s, params %v; want a converged fit with zero params", r.Status, r.B)
	}
	m, q = newFake(10)
	if _, err := FitCA(context.Background(), CAModel[*fakeState, *fakeWorker, float64, *fakeResult](withoutParams{m}), q, CASettings{}); err == nil || !strings.Contains(err.Error(), "no M-step") {
		t.Errorf("EM without CAParams: error %v", err)
	}
}
