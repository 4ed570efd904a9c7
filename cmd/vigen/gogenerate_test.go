package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// A user's project outside this repository, set up by following the
// README's words literally: a module (go mod init), the sh lines of "5. Use
// it from Go" run as written with /path/to/vigen replaced by this checkout,
// the //go:generate line it shows in a Go file beside a .vi model. `go
// generate` must write the package and `go run` must fit the model with it.
// The commands run with the environment's module settings (GOPROXY,
// GOSUMDB, GOMODCACHE), as the user's would, so the test does not count on
// what happens to be in the module cache: `go mod tidy` fetches the go.mod
// files of modules the repository's own build never loads (gonum/plot's
// svgo requires ajstarks/deck). The README adds vigen with go mod edit
// -tool rather than go get -tool, which asks the proxy whether
// github.com/vigen-go/vigen/cmd/vigen is a module of its own: an unpublished
// path that a proxy may answer with an error instead of "not found".
func TestGoGenerateInAUserModule(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds a separate module; skipped in -short mode")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(readme), "**5. Use it from Go.**")
	if at < 0 {
		t.Fatal("the README has no section 5, Use it from Go")
	}
	// the section's steps end where it names this test
	section, _, _ := strings.Cut(string(readme)[at:], "TestGoGenerateInAUserModule")
	var shLines []string
	var directive string
	in := ""
	for _, l := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"), strings.HasPrefix(l, "```go"):
			in = l[3:]
		case strings.HasPrefix(l, "```"):
			in = ""
		case in == "sh" && strings.TrimSpace(l) != "":
			shLines = append(shLines, strings.ReplaceAll(l, "/path/to/vigen", repo))
		case in == "go" && strings.HasPrefix(l, "//go:generate"):
			directive = l
		}
	}
	if len(shLines) < 3 || directive == "" {
		t.Fatalf("the README's section 5 has lost its commands: %q, %q", shLines, directive)
	}
	dir := t.TempDir()
	files := map[string]string{
		"tiny.vi": good,
		"gen.go":  "package main\n\n" + directive + "\n",
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
	// The user's program, which imports the generated package, comes with
	// the //go:generate line; the module is set up before either.
	program := map[string]string{"gen.go": files["gen.go"], "main.go": files["main.go"]}
	write(t, dir, "tiny.vi", files["tiny.vi"])
	goIn := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
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
	runIn("mod", "init", "example.com/project")
	for _, l := range shLines {
		f := strings.Fields(l)
		if f[0] != "go" {
			t.Fatalf("the README's section 5 runs %q, not go", l)
		}
		if f[1] == "generate" {
			for name, src := range program {
				write(t, dir, name, src)
			}
		}
		runIn(f[1:]...)
	}
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
