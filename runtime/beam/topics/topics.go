// Package topics registers vigen's topic models, LDA (examples/lda) and
// the correlated topic model (examples/ctm), with vigenbeam, their
// shards read from LDA-C files, and splits a corpus into shard files.
package topics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
	vigenbeam "github.com/vigen-go/vigen/runtime/beam"
)

// Config is the configuration both models read (vigenbeam.Opener's
// config, as JSON): the sizes, the seed and the convergence rule of the
// single-process fit the sharded fit reproduces.
type Config struct {
	K, V int
	Seed uint64
	// Alpha and Eta are LDA's constants (nil: lda.vi's defaults).
	Alpha, Eta *float64 `json:",omitempty"`
	// The convergence rule (zero fields: runtime's defaults; a negative
	// MeanTol turns that criterion off, as +Inf does in Options).
	MaxIter, LocalMaxIter  int     `json:",omitempty"`
	Tol, MeanTol, LocalTol float64 `json:",omitempty"`
	// Algorithm is "" (variational EM) or "svi" (and SVI its settings):
	// the shards' local tolerance defaults differently under SVI.
	Algorithm string              `json:",omitempty"`
	SVI       runtime.SVISettings `json:",omitempty"`
	// Workers is the number of goroutines of a shard's E-step (0: all
	// cores); results do not depend on it.
	Workers int `json:",omitempty"`
}

func init() {
	vigenbeam.Register("lda", openLDA)
	vigenbeam.Register("ctm", openCTM)
}

// LDAOptions are the options of LDA's fit under c.
func (c Config) LDAOptions() lda.Options {
	o := lda.Options{Seed: c.Seed, Workers: c.Workers, Algorithm: c.Algorithm, SVI: c.SVI}
	o.MaxIter, o.LocalMaxIter, o.Tol, o.MeanTol, o.LocalTol = c.MaxIter, c.LocalMaxIter, c.Tol, c.meanTol(), c.LocalTol
	return o
}

// meanTol is Options.MeanTol for c.MeanTol.
func (c Config) meanTol() float64 {
	if c.MeanTol < 0 {
		return math.Inf(1)
	}
	return c.MeanTol
}

// CTMOptions are the options of the CTM's fit under c.
func (c Config) CTMOptions() ctm.Options {
	o := ctm.Options{Seed: c.Seed, Workers: c.Workers, Algorithm: c.Algorithm, SVI: c.SVI}
	o.MaxIter, o.LocalMaxIter, o.Tol, o.MeanTol, o.LocalTol = c.MaxIter, c.LocalMaxIter, c.Tol, c.meanTol(), c.LocalTol
	return o
}

// docs reads spec's LDA-C file (none for the driver).
func docs(ctx context.Context, spec vigenbeam.ShardSpec) ([][][2]int, error) {
	if spec.Input == "" {
		return [][][2]int{}, nil
	}
	b, err := vigenbeam.ReadFile(ctx, spec.Input)
	if err != nil {
		return nil, err
	}
	return runtime.ReadLDAC(bytes.NewReader(b), "w")
}

func openLDA(ctx context.Context, config []byte, spec vigenbeam.ShardSpec) (runtime.Shard, error) {
	return open(ctx, "lda", config, spec)
}

func openCTM(ctx context.Context, config []byte, spec vigenbeam.ShardSpec) (runtime.Shard, error) {
	return open(ctx, "ctm", config, spec)
}

func open(ctx context.Context, model string, config []byte, spec vigenbeam.ShardSpec) (runtime.Shard, error) {
	var c Config
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("%s: config: %w", model, err)
	}
	w, err := docs(ctx, spec)
	if err != nil {
		return nil, err
	}
	return shardOf(model, c, w, spec.First, spec.Total)
}

// shardOf makes w, units first+1.. of total, a shard of model under c.
func shardOf(model string, c Config, w [][][2]int, first, total int) (runtime.Shard, error) {
	switch model {
	case "lda":
		m, err := lda.NewModel(&lda.Data{K: c.K, V: c.V, W: w, Alpha: c.Alpha, Eta: c.Eta})
		if err != nil {
			return nil, err
		}
		return m.Shard(c.LDAOptions(), first, total)
	case "ctm":
		m, err := ctm.NewModel(&ctm.Data{K: c.K, V: c.V, W: w})
		if err != nil {
			return nil, err
		}
		return m.Shard(c.CTMOptions(), first, total)
	}
	return nil, fmt.Errorf("no topic model %q (lda or ctm)", model)
}

// Whole makes all of docs one shard of model under c: given a sharded
// fit's globals and its shards' locals joined (vigenbeam.Runner.Locals),
// its Result is the whole fit's.
func Whole(model string, c Config, docs [][][2]int) (runtime.Shard, error) {
	return shardOf(model, c, docs, 0, len(docs))
}

// Split writes docs as n shard files of about equal numbers of
// documents, dir/shard-001-of-00n.dat and on (LDA-C; ShardName), and
// returns their specs.
// It refuses a dir holding files of its own names, so as never to
// overwrite a file it did not write.
func Split(docs [][][2]int, n int, dir string) ([]vigenbeam.ShardSpec, error) {
	if n < 1 || n > len(docs) {
		return nil, fmt.Errorf("cannot split %d documents into %d shards", len(docs), n)
	}
	var specs []vigenbeam.ShardSpec
	for i := 0; i < n; i++ {
		lo, hi := i*len(docs)/n, (i+1)*len(docs)/n
		path := filepath.Join(dir, ShardName(i+1, n))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		err = runtime.WriteLDAC(f, docs[lo:hi])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		specs = append(specs, vigenbeam.ShardSpec{Index: i, First: lo, Units: hi - lo, Total: len(docs), Input: path})
	}
	return specs, nil
}

// ShardName is the name of shard i (1-based) of n: shard-003-of-008.dat.
// The name carries the shard's number and the total, so that Shards can
// tell a complete set from one a file is missing from; the numbers are
// padded to the same width, so that name order is the shards' order.
func ShardName(i, n int) string {
	w := max(3, len(strconv.Itoa(n)))
	return fmt.Sprintf("shard-%0*d-of-%0*d.dat", w, i, w, n)
}

// shardOfN reads the number and the total (i of n) from a shard file's
// name, as ShardName writes them: ok is false if the name has none.
var shardOfN = regexp.MustCompile(`(\d+)-of-(\d+)\.[^/]*$`)

// CheckComplete checks that files, the names of shard files in name
// order, are a whole corpus, so that none is fitted without another: if
// their names carry "I-of-N" (ShardName), every name does, with one N,
// and the numbers are 1, …, N; if none does, declared (the number of
// shards the user gave, 0 if none) must equal their count. pattern is for
// messages.
func CheckComplete(files []string, pattern string, declared int) error {
	var have map[int]string
	total := -1
	for _, f := range files {
		m := shardOfN.FindStringSubmatch(f)
		if m == nil {
			if have != nil {
				return fmt.Errorf("%s: some shard names carry their number and the total (shard-001-of-008.dat) and %s does not; give the files of one split", pattern, f)
			}
			total = -2
			continue
		}
		if total == -2 {
			return fmt.Errorf("%s: some shard names carry their number and the total (%s) and others do not; give the files of one split", pattern, f)
		}
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if have == nil {
			have, total = map[int]string{}, n
		}
		switch {
		case n != total:
			return fmt.Errorf("%s: %s is a shard of %d, %s of %d; give the files of one split", pattern, f, n, have[firstKey(have)], total)
		case i < 1 || i > n:
			return fmt.Errorf("%s: %s is shard %d of %d, which cannot be", pattern, f, i, n)
		case have[i] != "":
			return fmt.Errorf("%s: %s and %s are both shard %d of %d", pattern, have[i], f, i, n)
		}
		have[i] = f
	}
	if have == nil { // names without numbers: the count must be declared
		switch {
		case declared == 0:
			return fmt.Errorf("%s: the %d shard names do not carry their number and the total (shard-001-of-008.dat, as -train writes them), so a missing one cannot be told: give -shards, the number of shard files", pattern, len(files))
		case declared != len(files):
			return fmt.Errorf("%s: %d shard files match, and -shards says %d: a shard is missing (its documents would be left out of the fit) or one too many matches", pattern, len(files), declared)
		}
		return nil
	}
	if declared != 0 && declared != total {
		return fmt.Errorf("%s: the shards' names say %d shards, and -shards says %d", pattern, total, declared)
	}
	var missing []string
	for i := 1; i <= total; i++ {
		if have[i] == "" {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: shard %s of %d missing (matching %d files): the fit would leave their documents out", pattern, strings.Join(missing, ", "), total, len(files))
	}
	for k, f := range files {
		if have[k+1] != f {
			return fmt.Errorf("%s: in name order, %s comes where shard %d of %d should; the documents' order would change (pad the numbers to one width)", pattern, f, k+1, total)
		}
	}
	return nil
}

// firstKey is the smallest key of m (for a message).
func firstKey(m map[int]string) int {
	k := math.MaxInt
	for i := range m {
		k = min(k, i)
	}
	return k
}

// Shards lists the LDA-C shard files matching pattern (any Beam file
// system), in name order, checks that they are a whole corpus
// (CheckComplete, with declared the number of shards given, or 0), reads
// them, and returns their specs and all their documents.
func Shards(ctx context.Context, pattern string, declared int) ([]vigenbeam.ShardSpec, [][][2]int, error) {
	files, err := vigenbeam.List(ctx, pattern)
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("no shard files match %s", pattern)
	}
	if err := CheckComplete(files, pattern, declared); err != nil {
		return nil, nil, err
	}
	var specs []vigenbeam.ShardSpec
	var all [][][2]int
	for i, f := range files {
		w, err := docs(ctx, vigenbeam.ShardSpec{Input: f})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(w) == 0 {
			return nil, nil, fmt.Errorf("%s: no documents", f)
		}
		specs = append(specs, vigenbeam.ShardSpec{Index: i, First: len(all), Units: len(w), Input: f})
		all = append(all, w...)
	}
	for i := range specs {
		specs[i].Total = len(all)
	}
	return specs, all, nil
}
