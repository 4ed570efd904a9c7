package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// TestReadmeCommands runs every vigen command the READMEs show in their sh
// blocks (`vigen …` or `go run ./cmd/vigen …`), from a scratch directory
// with the repository's paths made absolute: each must succeed as written.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds models (-short)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	n, runs := 0, 0
	for _, doc := range []string{"README.md", "examples/README.md"} {
		for _, line := range shellLines(t, filepath.Join(root, doc)) {
			args, ok := vigenArgs(line)
			if !ok {
				continue
			}
			n++
			// The first fit the README shows is its main job; the fast tier
			// runs it, the slow tier every fit.
			mainJob := args[0] == "run" && runs == 0
			if args[0] == "run" {
				runs++
			}
			for i, a := range args {
				if strings.HasPrefix(a, "examples/") {
					args[i] = filepath.Join(root, a)
				}
			}
			t.Run(strings.ReplaceAll(line, "/", "∕"), func(t *testing.T) {
				if args[0] == "run" && !mainJob {
					golden.SlowTier(t)
				}
				t.Chdir(t.TempDir())
				code, _, stderr := runCLI(args...)
				if code != 0 && args[0] != "run" {
					t.Fatalf("%s: %s\nexit %d:\n%s", doc, line, code, stderr)
				}
				if args[0] == "run" {
					checkRunExit(t, code, stderr)
				}
				// The README shows the plots of its main command.
				if strings.Contains(line, "hierlogreg.vi") && strings.Contains(line, "-plot plots") {
					for _, f := range []string{"elbo.svg", "latent-theta.svg"} {
						got, _ := os.ReadFile(filepath.Join("plots", f))
						want, _ := os.ReadFile(filepath.Join(root, "examples/hierlogreg/plots", f))
						if len(got) == 0 || string(got) != string(want) {
							t.Errorf("plots/%s differs from examples/hierlogreg/plots/%s, which the README shows; copy it there", f, f)
						}
					}
				}
			})
		}
	}
	if n < 4 {
		t.Errorf("found %d vigen commands in the READMEs; the parser has lost them", n)
	}
}

// shellLines returns the lines of the ```sh blocks of a Markdown file,
// without trailing comments.
func shellLines(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			if i := strings.Index(l, " #"); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// vigenArgs splits a shell line running vigen into its arguments.
func vigenArgs(line string) ([]string, bool) {
	for _, prefix := range []string{"vigen ", "go run ./cmd/vigen "} {
		if rest, ok := strings.CutPrefix(line, prefix); ok && !strings.ContainsAny(rest, "'\"\\|&;<>$") {
			return strings.Fields(rest), true
		}
	}
	return nil, false
}
