// Package bundled keeps the examples' data.json files, the data `vigen run`
// fits in the README and examples/README.md, equal to what each example's
// synthetic-data generator draws.
package bundled

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update-data", false, "rewrite the examples' data.json from their generators")

// Check asserts that the file at path holds data as JSON (one line, the
// form the generated packages' LoadData reads) and, with -update-data,
// rewrites it first. It returns the file's bytes.
func Check(t *testing.T, path string, data any) []byte {
	t.Helper()
	want, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestBundledData -update-data writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what the generator draws now; rewrite it with go test -run TestBundledData -update-data", path)
	}
	return got
}
