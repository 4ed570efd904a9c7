package derive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// TestMisdeclaredConjugate holds the messages for latents declared
// conjugate whose Markov blanket is not linear in their family's
// sufficient statistics (or whose family has no closed form): each must
// name the offending statement by file:line:col and say why. The models
// are spec/testdata/bad/conj_*.vi; their .stderr files, which hold what
// `vigen check` prints and are rewritten by `go test ./cmd/vigen -update`,
// must be exactly Derive's error.
func TestMisdeclaredConjugate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "spec", "testdata", "bad", "conj_*.vi"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test models: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := spec.Load(filepath.Base(path), src)
			if err != nil {
				t.Fatalf("the model must pass the checker (the error is derive's): %v", err)
			}
			_, err = Derive(m)
			if err == nil {
				t.Fatal("Derive accepted a misdeclared conjugate latent")
			}
			got := err.Error() + "\n"
			if !strings.HasPrefix(got, filepath.Base(path)+":") || !strings.Contains(got, "conjugate") {
				t.Errorf("message lacks a position or does not mention conjugacy: %s", got)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, ".vi") + ".stderr")
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/vigen -run TestBadModels -update)", err)
			}
			if got != string(want) {
				t.Errorf("message changed:\ngot  %s\nwant %s", got, want)
			}
		})
	}
}
