package main

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"testing"

	"github.com/vigen-go/vigen/examples/internal/bundled"
	"github.com/vigen-go/vigen/examples/schoolreg/schoolreg"
)

// ileaCSV is school.csv for the tests: SharedCSV from this directory
// (tests run in the package directory, two levels below the repository
// root) unless -ilea gives another path.
var ileaCSV = flag.String("ilea", "../../"+SharedCSV, "school.csv of the ILEA data")

// TestBundledData: data.json (when the shared data are present) is
// exactly the students of schools 1–15 that ReadCSV reads from school.csv,
// it is the data the command embeds, it loads, and holds the 15 schools.
func TestBundledData(t *testing.T) {
	want, err := ReadCSV(*ileaCSV, BundledSchools)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.Logf("ILEA data not found (%v); they live in ../shared/data/school: data.json is only loaded", err)
	case err != nil:
		t.Fatal(err)
	default:
		bundled.Check(t, "data.json", want)
	}
	b, err := os.ReadFile("data.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, bundledData) {
		t.Fatalf("data.json changed since the test binary embedded it; run the test again")
	}
	d, err := schoolreg.LoadData(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if d.J != BundledSchools || d.N != len(d.Score) || d.N < 1000 {
		t.Errorf("data.json: J = %d, N = %d (%d scores), want J = %d and over 1000 students", d.J, d.N, len(d.Score), BundledSchools)
	}
}
