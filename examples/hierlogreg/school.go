package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/runtime"
)

// Student is one record of the School data as the §5.2 experiment sees it.
type Student struct {
	School int       // 1-based school code
	X      []float64 // features (see Features)
	Good   int       // 1 if the exam score is above the median
}

// MedianScore is the School data's median exam score; a student is "good"
// when the score is above it (score > 19: 7,432 of 15,362 students).
const MedianScore = 19

// FeatureNames name the 27 columns Features builds: an intercept, the
// student features (year, gender, VR band, ethnic group) and the school
// features (free-meals %, VR1 %, school gender, denomination), categoricals
// one-hot encoded and percentages divided by 100.
var FeatureNames = func() []string {
	names := []string{"intercept", "year=1985", "year=1986", "year=1987", "female", "vrband=VR1", "vrband=VR2", "vrband=VR3"}
	for _, e := range []string{"ESWI", "African", "Arab", "Bangladeshi", "Caribbean", "Greek", "Indian", "Pakistani", "SE Asian", "Turkish", "other"} {
		names = append(names, "ethnic="+e)
	}
	return append(names, "fsm%/100", "vr1%/100", "school=mixed", "school=boys", "school=girls",
		"denom=maintained", "denom=CofE", "denom=RC")
}()

// schoolColumns are the columns of school.csv, in order.
var schoolColumns = []string{"year", "school", "score", "fsm", "vr1", "gender", "vrband", "ethnic", "schoolgender", "denomination"}

// ReadSchool reads school.csv (see ../shared/data/README.md) and returns its
// students with their features, and the number of schools.
func ReadSchool(path string) ([]Student, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	header, rows, err := runtime.ReadCSV(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	if len(header) != len(schoolColumns) {
		return nil, 0, fmt.Errorf("%s: header has %d columns, want %d (%v)", path, len(header), len(schoolColumns), schoolColumns)
	}
	for k, h := range header {
		if h != schoolColumns[k] {
			return nil, 0, fmt.Errorf("%s: column %d is %q, want %q", path, k+1, h, schoolColumns[k])
		}
	}
	out := make([]Student, len(rows))
	schools := 0
	for r, row := range rows {
		s, err := Features(row)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: row %d: %v", path, r+2, err)
		}
		out[r] = s
		schools = max(schools, s.School)
	}
	return out, schools, nil
}

// Features encodes one school.csv row (columns as in schoolColumns).
func Features(row []float64) (Student, error) {
	v := make([]int, len(row))
	for k, x := range row {
		if x != math.Trunc(x) {
			return Student{}, fmt.Errorf("%s = %v is not an integer", schoolColumns[k], x)
		}
		v[k] = int(x)
	}
	year, school, score, fsm, vr1, gender, vrband, ethnic, sgender, denom := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]
	check := func(name string, x, lo, hi int) error {
		if x < lo || x > hi {
			return fmt.Errorf("%s = %d is outside %d..%d", name, x, lo, hi)
		}
		return nil
	}
	for _, c := range []struct {
		name      string
		x, lo, hi int
	}{{"year", year, 1, 3}, {"school", school, 1, 1 << 20}, {"score", score, 0, 100}, {"fsm", fsm, 0, 100}, {"vr1", vr1, 0, 100},
		{"gender", gender, 0, 1}, {"vrband", vrband, 0, 3}, {"ethnic", ethnic, 1, 11}, {"schoolgender", sgender, 1, 3}, {"denomination", denom, 1, 3}} {
		if err := check(c.name, c.x, c.lo, c.hi); err != nil {
			return Student{}, err
		}
	}
	x := make([]float64, len(FeatureNames))
	x[0] = 1
	x[year] = 1 // columns 1-3
	x[4] = float64(gender)
	// vrband codes: 2 = VR1 (top), 3 = VR2, 1 = VR3; 0 (15 students) is unknown: no column set
	if col := map[int]int{2: 5, 3: 6, 1: 7}[vrband]; col > 0 {
		x[col] = 1
	}
	x[7+ethnic] = 1 // columns 8-18
	x[19], x[20] = float64(fsm)/100, float64(vr1)/100
	x[20+sgender] = 1 // columns 21-23
	x[23+denom] = 1   // columns 24-26
	good := 0
	if score > MedianScore {
		good = 1
	}
	return Student{School: school, X: x, Good: good}, nil
}

// Split divides the students of each school at random into 75% training
// and 25% test rows (rounded to the nearest student), reproducibly: the
// shuffle of split k depends only on seed and k.
func Split(students []Student, schools int, seed uint64, k int) (train, test []Student) {
	rng := rand.New(rand.NewPCG(seed, uint64(k)+0x7363686f))
	bySchool := make([][]int, schools+1)
	for i, s := range students {
		bySchool[s.School] = append(bySchool[s.School], i)
	}
	for _, rows := range bySchool {
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		n := int(math.Round(0.75 * float64(len(rows))))
		for j, i := range rows {
			if j < n {
				train = append(train, students[i])
			} else {
				test = append(test, students[i])
			}
		}
	}
	return train, test
}

// Setting is one of §5.2's three ways of treating the schools.
type Setting string

// The settings of Table 2.
const (
	Separate     Setting = "separate"     // one regression per school, prior N(0, I)
	Pooled       Setting = "pooled"       // one regression for all schools, prior N(0, I)
	Hierarchical Setting = "hierarchical" // per-school coefficients, shared prior estimated (EM)
)

// Settings lists them in Table 2's order.
var Settings = []Setting{Separate, Pooled, Hierarchical}

// SchoolData builds the model's data for a setting: the separate and pooled
// fits keep the prior fixed at N(0, I) (the initial q(θ) of §5.2); the
// pooled fit has one group.
func SchoolData(s Setting, train []Student, schools int) *hierlogreg.Data {
	p := len(FeatureNames)
	d := &hierlogreg.Data{M: schools, N: len(train), P: p}
	for _, st := range train {
		g := st.School
		if s == Pooled {
			g = 1
		}
		d.X, d.Y, d.Group = append(d.X, st.X), append(d.Y, st.Good), append(d.Group, g)
	}
	if s == Pooled {
		d.M = 1
	}
	if s != Hierarchical {
		d.Mu0 = make([]float64, p)
		d.Lambda0 = make([][]float64, p)
		for i := range d.Lambda0 {
			d.Lambda0[i] = make([]float64, p)
			d.Lambda0[i][i] = 1
		}
	}
	return d
}

// Score is a fit's performance on test rows (Wang & Blei §5.2).
type Score struct {
	Accuracy float64 `json:"accuracy"`
	LogLik   float64 `json:"loglik"` // mean log p(z | μ, t), μ the school's posterior mean
}

// Evaluate scores a fit on test students with the generated package's
// Predict at q's means (the plug-in predictive, no draws): accuracy of
// p(z = 1) = σ(μᵀt) > ½ and the mean predictive log likelihood
// z log σ(μᵀt) + (1−z) log σ(−μᵀt), with μ the posterior mean of the
// student's school (of the one group if pooled), as in Wang & Blei §5.2.
func Evaluate(res *hierlogreg.Result, s Setting, test []Student) (Score, error) {
	d := SchoolData(s, test, len(res.Latent.Theta))
	d.Mu0, d.Lambda0 = nil, nil // Predict takes the params from res
	pr, err := hierlogreg.Predict(res, d, runtime.PredictSettings{Draws: -1})
	if err != nil {
		return Score{}, err
	}
	var sc Score
	for i, p := range pr.Vars[0].PlugInMean {
		if (p > 0.5) == (d.Y[i] == 1) {
			sc.Accuracy++
		}
	}
	sc.Accuracy /= float64(len(test))
	sc.LogLik = pr.Score.MeanPlugIn
	return sc, nil
}

// schoolRun is one fit of the experiment.
type schoolRun struct {
	Setting    Setting `json:"setting"`
	Method     string  `json:"method"`
	Split      int     `json:"split"`
	Status     string  `json:"status"`
	Iterations int     `json:"iterations"`
	Seconds    float64 `json:"seconds"`
	Score
}

// paperTable2 holds Wang & Blei's Table 2 (accuracy, log likelihood).
var paperTable2 = map[string][2]float64{
	"separate laplace": {0.708, -0.569}, "separate delta": {0.708, -0.571},
	"pooled laplace": {0.713, -0.557}, "pooled delta": {0.713, -0.557},
	"hierarchical laplace": {0.719, -0.549}, "hierarchical delta": {0.719, -0.559},
}

func runSchool(c config, stdout, stderr io.Writer) error {
	students, schools, err := ReadSchool(c.school)
	if err != nil {
		return err
	}
	methods := []string{c.method}
	switch c.method {
	case "both":
		methods = []string{"laplace", "delta"}
	case "":
		methods = []string{"laplace"}
	}
	var runs []schoolRun
	for k := range c.splits {
		train, test := Split(students, schools, c.seed, k)
		for _, s := range Settings {
			d := SchoolData(s, train, schools)
			for _, method := range methods {
				opts := hierlogreg.Options{Method: method, MaxIter: c.maxIter, FixParams: s != Hierarchical}
				start := time.Now()
				res, err := hierlogreg.Fit(context.Background(), d, opts)
				if err != nil {
					return fmt.Errorf("split %d, %s %s: %v", k+1, s, method, err)
				}
				secs := time.Since(start).Seconds()
				sc, err := Evaluate(res, s, test)
				if err != nil {
					return fmt.Errorf("split %d, %s %s: scoring the test rows: %v", k+1, s, method, err)
				}
				r := schoolRun{Setting: s, Method: res.Method, Split: k + 1, Status: res.Status, Iterations: res.Iterations,
					Seconds: secs, Score: sc}
				runs = append(runs, r)
				if !c.quiet {
					fmt.Fprintf(stderr, "split %2d  %-12s %-7s %-10s %4d iterations %6.2f s  accuracy %.4f  loglik %.4f\n",
						r.Split, s, r.Method, r.Status, r.Iterations, r.Seconds, r.Accuracy, r.LogLik)
				}
			}
		}
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			Students int         `json:"students"`
			Schools  int         `json:"schools"`
			Features []string    `json:"features"`
			Runs     []schoolRun `json:"runs"`
		}{len(students), schools, FeatureNames, runs})
	}
	fmt.Fprintf(stdout, "School data: %d students, %d schools, %d features; %d splits 75/25 within each school (seed %d)\n",
		len(students), schools, len(FeatureNames), c.splits, c.seed)
	fmt.Fprintf(stdout, "%-13s %-8s %18s %18s %8s   %s\n", "setting", "method", "accuracy (sd)", "loglik (sd)", "s/fit", "Wang & Blei Table 2")
	for _, s := range Settings {
		for _, method := range methods {
			var acc, ll, secs []float64
			for _, r := range runs {
				if r.Setting == s && r.Method == method {
					acc, ll, secs = append(acc, r.Accuracy), append(ll, r.LogLik), append(secs, r.Seconds)
				}
			}
			ma, sa := meanSD(acc)
			ml, sl := meanSD(ll)
			mt, _ := meanSD(secs)
			paper := paperTable2[string(s)+" "+method]
			fmt.Fprintf(stdout, "%-13s %-8s %9.2f%% (%.2f) %10.4f (%.4f) %8.3f   %.1f%% / %.3f\n", s, method, 100*ma, 100*sa, ml, sl, mt, 100*paper[0], paper[1])
		}
	}
	return nil
}

func meanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}
