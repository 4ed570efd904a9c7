package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A user's project outside this repository: a module with a .vi file and
// the one-line //go:generate comment the README shows. `go generate` must
// write the package and `go run` must fit the model with it. The module
// points at this checkout with a replace directive, so nothing is
// downloaded beyond what the repository's own tests already need.
func TestGoGenerateInAUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module; skipped in -short mode")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// The user's go.mod: this repository's requirements (so go.sum covers
	// them), plus vigen itself from this checkout.
	mod := strings.Replace(string(goMod), "module github.com/vigen-go/vigen", "module example.com/project", 1) +
		"\nrequire github.com/vigen-go/vigen v0.0.0\n\nreplace github.com/vigen-go/vigen => " + repo + "\n"
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  mod,
		"go.sum":  string(goSum),
		"tiny.vi": good,
		"gen.go":  "package main\n\n//go:generate go run github.com/vigen-go/vigen/cmd/vigen gen -o tiny tiny.vi\n",
		"main.go": `package main

import (
	"context"
	"fmt"
	"strings"

	"example.com/project/tiny"
)

func main() {
	d, err := tiny.LoadData(strings.NewReader(` + "`" + `{"x": [[1, 0.5], [1, -1], [1, 2], [1, -0.3]], "y": [1, 0, 1, 0]}` + "`" + `))
	if err != nil {
		panic(err)
	}
	res, err := tiny.Fit(context.Background(), d, tiny.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %v %d\n", res.Status, res.Converged, len(res.Latent.W.Mean))
}
`,
	}
	for name, src := range files {
		write(t, dir, name, src)
	}
	goIn := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	runIn := func(args ...string) string {
		t.Helper()
		out, err := goIn(args...)
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	runIn("generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "tiny", "tiny.go")); err != nil {
		t.Fatalf("go generate did not write the package: %v", err)
	}
	if out := runIn("run", "."); strings.TrimSpace(out) != "converged true 2" {
		t.Errorf("the user's program printed %q, want %q", out, "converged true 2")
	}
	// The user's CI: vigen gen -check passes on the fresh package and
	// fails, naming it, once the model is edited.
	check := []string{"run", "github.com/vigen-go/vigen/cmd/vigen", "gen", "-check", "-o", "tiny", "tiny.vi"}
	runIn(check...)
	write(t, dir, "tiny.vi", strings.Replace(good, "const S : cov[P] = eye(P)", "const S : cov[P] = 2 * eye(P)", 1))
	if out, err := goIn(check...); err == nil || !strings.Contains(out, filepath.Join("tiny", "tiny.go")+" is stale") {
		t.Errorf("vigen gen -check after editing tiny.vi: %v\n%s\nwant exit status 1 naming tiny/tiny.go", err, out)
	}
}
