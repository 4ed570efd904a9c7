package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The command fits synthetic documents drawn from the bundled parameters and
// recovers their topic weights. The threshold on the top-topic agreement:
// from the prior alone (argmax μ0 for every document) it is 0.15 (measured
// on 20,000 documents drawn as Synthetic draws them), by chance 1/K = 0.1;
// the fit gets 0.88 on the default 100 documents and 0.75 to 0.95 on 20
// documents with seeds 1 to 12 (0.75 with seed 1, which the test uses). At
// a true rate of 0.85, 12 or fewer of 20 agree with probability 0.006, so
// a fit that works passes, and one that ignores the words fails.
func TestCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-D", "20", "-q"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"20 synthetic documents", "status converged", "µs per document", "per-word log likelihood", "correlation of E[θ_d]", "top topic agreement"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if m := regexp.MustCompile(`top topic agreement ([0-9.]+)`).FindStringSubmatch(s); m == nil {
		t.Errorf("no agreement in the output:\n%s", s)
	} else if a, _ := strconv.ParseFloat(m[1], 64); a <= 0.6 {
		t.Errorf("top topic agreement %v, want > 0.6:\n%s", a, s)
	}
	if m := regexp.MustCompile(`correlation of E\[θ_d\] and the true θ_d ([0-9.]+)`).FindStringSubmatch(s); m == nil {
		t.Errorf("no correlation in the output:\n%s", s)
	} else if r, _ := strconv.ParseFloat(m[1], 64); r <= 0.5 {
		t.Errorf("correlation %v, want > 0.5 (0.75 when written):\n%s", r, s)
	}
	if errOut.Len() != 0 {
		t.Errorf("-q wrote to stderr:\n%s", errOut.String())
	}

	// Progress, the delta method and JSON.
	out.Reset()
	errOut.Reset()
	if err := run([]string{"-D", "5", "-method", "delta", "-json"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Method    string `json:"method"`
		Converged bool   `json:"converged"`
		Latent    struct {
			Theta []struct {
				Mean []float64 `json:"mean"`
			} `json:"theta"`
		} `json:"latent"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if r.Method != "delta,conjugate" || !r.Converged || len(r.Latent.Theta) != 5 || len(r.Latent.Theta[0].Mean) != 10 {
		t.Errorf("unexpected JSON result: %+v", r)
	}
	if !strings.Contains(errOut.String(), "iter   1") {
		t.Errorf("no progress on stderr: %q", errOut.String())
	}

	// Documents in LDA-C format: no truth, so no truth metrics.
	dir := t.TempDir()
	good := filepath.Join(dir, "good.dat")
	if err := os.WriteFile(good, []byte("2 0:3 10472:1\n1 5:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run([]string{"-q", "-ldac", good}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "per-word log likelihood") || strings.Contains(s, "agreement") {
		t.Errorf("-ldac output:\n%s", s)
	}

	bad := filepath.Join(dir, "bad.dat")
	if err := os.WriteFile(bad, []byte("2 0:1 10473:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-ldac", filepath.Join(dir, "none.dat")}, "none.dat"},
		{[]string{"-ldac", bad}, "document 1: term id 10473 is beyond the V = 10473 terms"},
		{[]string{"-ldac", good, "-D", "5"}, "-D is for synthetic documents"},
		{[]string{"-params", filepath.Join(dir, "none.json.gz")}, "none.json.gz"},
		{[]string{"-params", bad}, "bad.dat"},
		{[]string{"-method", "newton"}, `-method "newton"`},
		{[]string{"-D", "0"}, "-D 0"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		out.Reset()
		errOut.Reset()
		err := run(append([]string{"-q"}, c.args...), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}
