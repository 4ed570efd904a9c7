package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
)

// heldoutFlags are vigen run's flags reading bag data from LDA-C files
// (-ldac bag=FILE) and scoring the fit on held-out documents (-heldout-obs,
// -heldout, -heldout-out), passed through to the model's command, which
// refuses them for models without bags or without Model.Heldout.
type heldoutFlags struct {
	ldac, csv      ldacList
	jsonl          ldacList
	obs, held, out string
	plugIn         bool
	// predictions of new rows (-predict, -test, -predict-out, -predict-draws)
	predict, test, predictOut string
	predictDraws              int
}

// ldacList collects -ldac bag=FILE flags, in order.
type ldacList []string

func (l *ldacList) String() string { return strings.Join(*l, " ") }

func (l *ldacList) Set(v string) error {
	if name, path, ok := strings.Cut(v, "="); !ok || name == "" || path == "" {
		return fmt.Errorf("want NAME=FILE, e.g. w=train.dat or y,x=table.csv")
	}
	*l = append(*l, v)
	return nil
}

func (h *heldoutFlags) register(fs *flag.FlagSet) {
	fs.Var(&h.ldac, "ldac", "bag=FILE: read the bag data variable bag from an LDA-C file (0-based term ids) instead of -data; repeatable")
	fs.Var(&h.jsonl, "jsonl", "NAMES=FILE: read the data variables NAMES (comma-separated) from the JSON-lines file FILE, one object per line: a number for a vector, an array for a matrix's row; sizes -data does not give are set from it; repeatable")
	fs.Var(&h.csv, "csv", "NAMES=FILE: read the data variables NAMES (comma-separated) from the CSV table FILE (a header row, then numbers): a vector from the column of its name, a matrix from the remaining columns; sizes -data does not give are set from the table; repeatable")
	fs.StringVar(&h.obs, "heldout-obs", "", "observed halves of test documents (LDA-C), for held-out evaluation by document completion (bag-of-words models)")
	fs.StringVar(&h.held, "heldout", "", "held-out halves of the same test documents (LDA-C, line-aligned with -heldout-obs)")
	fs.StringVar(&h.out, "heldout-out", "", "write the held-out score as JSON here (the score also goes to stderr)")
	fs.BoolVar(&h.plugIn, "heldout-plugin", false, "score held-out documents with every Gaussian factor at its mean (softmax(E[θ_d]) for the CTM, as Wang & Blei score) instead of the predictive's expectations under q")
	fs.StringVar(&h.predict, "predict", "", "JSON data with new rows: predict their observed variables (which the file may leave out) under the fit, at q's means and over draws from q; written to -predict-out")
	fs.StringVar(&h.test, "test", "", "JSON data with new rows, observed variables given: score the fit on them (log predictive density per observation, on stderr); the predictions go to -predict-out if given")
	fs.StringVar(&h.predictOut, "predict-out", "", "write the predictions of -predict or -test as JSON here")
	fs.IntVar(&h.predictDraws, "predict-draws", 0, "draws from q for -predict and -test (0: 1000; -1: none, the plug-in predictive at q's means only)")
}

// args are the model command's flags, with absolute paths.
func (h *heldoutFlags) args() ([]string, error) {
	var a []string
	abs := func(flag, p string) error {
		if p == "" {
			return nil
		}
		q, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("-%s: %v", flag, err)
		}
		a = append(a, "-"+flag, q)
		return nil
	}
	for _, list := range []struct {
		flag string
		l    ldacList
	}{{"ldac", h.ldac}, {"csv", h.csv}, {"jsonl", h.jsonl}} {
		for _, l := range list.l {
			name, path, _ := strings.Cut(l, "=")
			q, err := filepath.Abs(path)
			if err != nil {
				return nil, fmt.Errorf("-%s: %v", list.flag, err)
			}
			a = append(a, "-"+list.flag, name+"="+q)
		}
	}
	if h.plugIn {
		a = append(a, "-heldout-plugin")
	}
	if h.predictDraws != 0 {
		a = append(a, fmt.Sprintf("-predict-draws=%d", h.predictDraws))
	}
	for _, f := range [][2]string{{"heldout-obs", h.obs}, {"heldout", h.held}, {"heldout-out", h.out}, {"predict", h.predict}, {"test", h.test}, {"predict-out", h.predictOut}} {
		if err := abs(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	return a, nil
}
