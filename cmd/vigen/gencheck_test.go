package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// listing returns the files under dir with their contents, to show that
// vigen gen -check writes nothing.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameListing(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestGenCheck: vigen gen -check exits 0 on the package gen just wrote, and
// 1 naming the file when the .vi was edited since, when the package was
// edited by hand, when it is missing, and when gen would remove a file;
// it never writes.
func TestGenCheck(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	out := filepath.Join(dir, "pkg")
	pkgFile := filepath.Join(out, "tiny.go")

	check := func(args ...string) (int, string) {
		t.Helper()
		before := listing(t, dir)
		code, stdout, stderr := runCLI(append(append([]string{"gen", "-check", "-o", out}, args...), vi)...)
		if stdout != "" {
			t.Errorf("gen -check wrote %q on stdout", stdout)
		}
		if after := listing(t, dir); !sameListing(before, after) {
			t.Errorf("gen -check changed the directory:\nbefore %v\nafter  %v", keys(before), keys(after))
		}
		return code, stderr
	}

	// Missing: nothing generated yet, and -check does not create the directory.
	if code, stderr := check(); code != 1 || !strings.Contains(stderr, pkgFile+" is missing") {
		t.Errorf("before gen: exit %d, stderr %q; want 1 naming %s as missing", code, stderr, pkgFile)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("gen -check created %s", out)
	}

	// Fresh.
	if code, _, stderr := runCLI("gen", "-o", out, vi); code != 0 {
		t.Fatalf("gen: exit %d\n%s", code, stderr)
	}
	if code, stderr := check(); code != 0 || stderr != "" {
		t.Errorf("fresh package: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	// The same package checked with other flags is stale.
	if code, stderr := check("-kernels"); code != 1 || !strings.Contains(stderr, pkgFile+" is stale") {
		t.Errorf("fresh package checked with -kernels: exit %d, stderr %q; want 1 naming %s", code, stderr, pkgFile)
	}

	// The model edited after generation: even a comment changes the hash.
	write(t, dir, "tiny.vi", good+"# a comment\n")
	code, stderr := check()
	if code != 1 || !strings.Contains(stderr, pkgFile+" is stale") || !strings.Contains(stderr, "another version of tiny.vi") {
		t.Errorf("edited .vi: exit %d, stderr %q; want 1 naming %s as generated from another version of tiny.vi", code, stderr, pkgFile)
	}
	write(t, dir, "tiny.vi", good)
	if code, stderr := check(); code != 0 {
		t.Errorf("after undoing the edit: exit %d, stderr %q; want 0", code, stderr)
	}

	// The package edited by hand.
	src, err := os.ReadFile(pkgFile)
	if err != nil {
		t.Fatal(err)
	}
	write(t, out, "tiny.go", strings.Replace(string(src), "package tiny", "package tiny // mine", 1))
	code, stderr = check()
	if code != 1 || !strings.Contains(stderr, pkgFile+" is stale") || !strings.Contains(stderr, "edited by hand") {
		t.Errorf("hand-edited package: exit %d, stderr %q; want 1 naming %s as edited", code, stderr, pkgFile)
	}
	write(t, out, "tiny.go", string(src))

	// A file gen would remove: the package written under another name.
	if code, _, stderr := runCLI("gen", "-o", out, "-pkg", "other", vi); code != 0 {
		t.Fatalf("gen -pkg other: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI("gen", "-o", out, vi); code != 0 {
		t.Fatalf("gen: exit %d\n%s", code, stderr)
	}
	if code, stderr := check(); code != 0 {
		t.Errorf("after gen removed other.go: exit %d, stderr %q; want 0", code, stderr)
	}
	if code, _, stderr := runCLI("gen", "-o", filepath.Join(dir, "tmp"), "-pkg", "other", vi); code != 0 {
		t.Fatalf("gen -pkg other: exit %d\n%s", code, stderr)
	}
	other, _ := os.ReadFile(filepath.Join(dir, "tmp", "other.go"))
	os.RemoveAll(filepath.Join(dir, "tmp"))
	write(t, out, "other.go", string(other))
	otherFile := filepath.Join(out, "other.go")
	if code, stderr := check(); code != 1 || !strings.Contains(stderr, otherFile+" is stale: vigen gen would remove it") {
		t.Errorf("with the package also under another name: exit %d, stderr %q; want 1 naming %s", code, stderr, otherFile)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
