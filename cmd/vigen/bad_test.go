package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite spec/testdata/bad/*.stderr and testdata/summary/*.txt")

// TestBadModels runs `vigen check` on every model of spec/testdata/bad and
// compares its stderr with the model's .stderr file. Each must exit with
// status 1, and every error must have a file:line:col position and a hint.
func TestBadModels(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "spec", "testdata", "bad", "*.vi"))
	if err != nil || len(files) < 30 {
		t.Fatalf("want at least 30 bad models, found %d (%v)", len(files), err)
	}
	errors := 0
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".vi"), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"check", path}, &stdout, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
			}
			got := stderr.String()
			golden := strings.TrimSuffix(path, ".vi") + ".stderr"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want, err := os.ReadFile(golden); err != nil {
				t.Fatalf("%v (run go test ./cmd/vigen -run TestBadModels -update)", err)
			} else if got != string(want) {
				t.Errorf("stderr differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
			pos := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `:\d+:\d+: \S`)
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			for i, line := range lines {
				if strings.HasPrefix(line, "\thint: ") {
					continue
				}
				errors++
				if !pos.MatchString(line) {
					t.Errorf("error without a file:line:col position: %q", line)
				}
				if i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "\thint: ") {
					t.Errorf("error without a hint: %q", line)
				}
			}
		})
	}
	t.Logf("%d models, %d errors", len(files), errors)
}
