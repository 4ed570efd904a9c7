package main

import (
	"fmt"
	"os"

	"github.com/vigen-go/vigen/examples/schoolreg/schoolreg"
	"github.com/vigen-go/vigen/runtime"
)

// schoolColumns are the columns of school.csv, in order (see
// ../shared/data/README.md).
var schoolColumns = []string{"year", "school", "score", "fsm", "vr1", "gender", "vrband", "ethnic", "schoolgender", "denomination"}

// ReadCSV reads school.csv into the model's data: score, the student's VR
// band as the indicators vr1 (band 1, coded vrband = 2) and vr2 (band 2,
// coded 3), band 3 (coded 1) the reference, and the school code. The 15
// students whose band is missing (coded 0) are left out. With maxSchool >
// 0 only the students of school codes 1..maxSchool are kept. N and J are
// set (J = the largest school code kept).
func ReadCSV(path string, maxSchool int) (*schoolreg.Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	header, rows, err := runtime.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(header) != len(schoolColumns) {
		return nil, fmt.Errorf("%s: header has %d columns, want %d (%v)", path, len(header), len(schoolColumns), schoolColumns)
	}
	for k, h := range header {
		if h != schoolColumns[k] {
			return nil, fmt.Errorf("%s: column %d is %q, want %q", path, k+1, h, schoolColumns[k])
		}
	}
	d := &schoolreg.Data{}
	for r, row := range rows {
		school, score, band := int(row[1]), row[2], int(row[6])
		if float64(school) != row[1] || school < 1 || float64(band) != row[6] {
			return nil, fmt.Errorf("%s: row %d: school %v or vrband %v is not a code", path, r+2, row[1], row[6])
		}
		if band == 0 || (maxSchool > 0 && school > maxSchool) {
			continue
		}
		if band < 1 || band > 3 {
			return nil, fmt.Errorf("%s: row %d: vrband %d, want 0 to 3", path, r+2, band)
		}
		d.Score = append(d.Score, score)
		d.Vr1 = append(d.Vr1, b2i(band == 2))
		d.Vr2 = append(d.Vr2, b2i(band == 3))
		d.School = append(d.School, school)
		d.J = max(d.J, school)
	}
	d.N = len(d.Score)
	if d.N == 0 {
		return nil, fmt.Errorf("%s: no students", path)
	}
	return d, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
