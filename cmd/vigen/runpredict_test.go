package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/logreg/logreg"
	"github.com/vigen-go/vigen/runtime"
)

// vigen run logreg.vi -test scores the fit on new rows and -predict
// predicts rows without labels: the predictions in -predict-out are the
// ones logreg.Predict gives in-process for the same fit, and the score is
// on stderr. Bad combinations are refused before the fit.
func TestRunPredict(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	dir := t.TempDir()
	f, err := os.Open("../../examples/logreg/data.json")
	if err != nil {
		t.Fatal(err)
	}
	all, err := logreg.LoadData(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	train := &logreg.Data{X: all.X[:400], Y: all.Y[:400]}
	test := &logreg.Data{X: all.X[400:], Y: all.Y[400:]}
	trainPath := write("train.json", map[string]any{"x": train.X, "y": train.Y})
	testPath := write("test.json", map[string]any{"x": test.X, "y": test.Y})
	newPath := write("new.json", map[string]any{"x": test.X})
	out := filepath.Join(dir, "pred.json")

	fit, err := logreg.Fit(context.Background(), train, logreg.Options{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag, path string
		rows       *logreg.Data
	}{{"-test", testPath, test}, {"-predict", newPath, &logreg.Data{X: test.X}}} {
		code, _, stderr := runCLI("run", "../../examples/logreg/logreg.vi", "-data", trainPath, "-seed", "2", "-q",
			c.flag, c.path, "-predict-out", out, "-predict-draws", "300")
		if code != exitConverged {
			t.Fatalf("%s: exit %d:\n%s", c.flag, code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var got runtime.Prediction
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want, err := logreg.Predict(fit, c.rows, runtime.PredictSettings{Draws: 300, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, want) || !strings.Contains(stderr, want.String()) {
			t.Errorf("%s: vigen run predicted\n%+v\nlogreg.Predict\n%+v\nstderr:\n%s", c.flag, got, want, stderr)
		}
		if (c.flag == "-test") != (want.Score != nil) {
			t.Errorf("%s: score %+v", c.flag, want.Score)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"../../examples/logreg/logreg.vi", "-data", trainPath, "-predict", newPath}, "-predict needs -predict-out"},
		{[]string{"../../examples/logreg/logreg.vi", "-data", trainPath, "-predict", newPath, "-test", testPath, "-predict-out", out}, "-predict and -test: give one"},
		{[]string{"../../examples/logreg/logreg.vi", "-data", trainPath, "-test", newPath}, "the file leaves out the observed variable y"},
		{[]string{"../../examples/logreg/logreg.vi", "-data", trainPath, "-test", filepath.Join(dir, "none.json")}, "none.json"},
		{[]string{"../../examples/logreg/logreg.vi", "-data", trainPath, "-heldout-plugin"}, "-heldout-plugin goes with -heldout-obs and -heldout"},
		{[]string{"../../examples/eightschools/eightschools.vi", "-data", "../../examples/eightschools/data.json", "-test", testPath},
			"eightschools has no predictions of new rows: eightschools.vi:"},
	} {
		code, _, stderr := runCLI(append([]string{"run", "-q"}, c.args...)...)
		if code == exitConverged || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant it to contain %q", c.args, code, stderr, c.want)
		}
	}
}
