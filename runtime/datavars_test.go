package runtime

import (
	"reflect"
	"strings"
	"testing"
)

// tableData and tableModel are the Data and Model a generated package
// would have for
//
//	size N, K, V
//	data x : real[N, K]
//	data c : int[N, K, 2] in 0..K      (a cube)
//	data w : bag[N] of 1..V
//	data r : real[N, w]                (ragged: one value per entry of w)
//	const s : real = …                 (a default)
//	const p : simplex[K]               (required)
//	param mu : real[K]
type tableData struct {
	N, K, V int
	X       [][]float64
	C       [][][]int
	W       [][][2]int
	R       [][]float64
	S       *float64
	P       []float64
	Mu      []float64
	given   map[string]bool
}

type tableModel struct {
	n, k, v        int
	x, r, p, mu    []float64
	c              []int
	wOff, wTerm    []int
	wCount         []float64
	s              float64
	defaultsCalled int
}

func (d *tableData) table(m *tableModel) *DataTable {
	return &DataTable{Given: &d.given, Vars: []DataVar{
		{Name: "N", Kind: KindSize, Data: &d.N, Model: &m.n},
		{Name: "K", Kind: KindSize, Data: &d.K, Model: &m.k},
		{Name: "V", Kind: KindSize, Data: &d.V, Model: &m.v},
		{Name: "x", Dims: []string{"N", "K"}, Data: &d.X, Model: &m.x},
		{Name: "c", Kind: KindInt, Dims: []string{"N", "K", "K"}, Range: []Bound{{Value: 0}, {Size: "K"}}, Data: &d.C, Model: &m.c},
		{Name: "w", Kind: KindInt, Class: ClassBag, Dims: []string{"N"}, Range: []Bound{{Value: 1}, {Size: "V"}}, Data: &d.W, Off: &m.wOff, Term: &m.wTerm, Count: &m.wCount},
		{Name: "r", Class: ClassRagged, Dims: []string{"N", "w"}, Data: &d.R, Model: &m.r, Off: &m.wOff},
		{Name: "s", Role: RoleConst, Data: &d.S, Model: &m.s, Default: func() { m.s = 0.5; m.defaultsCalled++ }},
		{Name: "p", Role: RoleConst, Class: ClassSimplex, Dims: []string{"K"}, Pos: "t.vi:9:7", Data: &d.P, Model: &m.p},
		{Name: "mu", Role: RoleParam, Dims: []string{"K"}, Data: &d.Mu, Model: &m.mu},
	}}
}

func loadTable(d *tableData) (*tableModel, error) {
	m := new(tableModel)
	t := d.table(m)
	if _, err := t.BindSizes(); err != nil {
		return nil, err
	}
	if err := t.CheckAllocs(nil); err != nil {
		return nil, err
	}
	return m, t.Load()
}

// A DataTable decodes, binds, checks and flattens every kind of variable a
// generated package has, and its errors name the variable and the index.
func TestDataTable(t *testing.T) {
	const good = `{"V": 3, "x": [[1, 2], [3, 4]], "c": [[[0, 1], [2, 2]], [[1, 1], [0, 0]]],
		"w": [[[1, 2], [3, 1]], [[2, 5]]], "r": [[0.5, 1.5], [2.5]], "p": [0.25, 0.75]}`
	d := new(tableData)
	if err := d.table(new(tableModel)).Decode(strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.given, map[string]bool{"V": true}) {
		t.Errorf("given = %v, want V only", d.given)
	}
	m, err := loadTable(d)
	if err != nil {
		t.Fatal(err)
	}
	want := &tableModel{n: 2, k: 2, v: 3, x: []float64{1, 2, 3, 4}, c: []int{0, 1, 2, 2, 1, 1, 0, 0},
		wOff: []int{0, 2, 3}, wTerm: []int{1, 3, 2}, wCount: []float64{2, 1, 5}, r: []float64{0.5, 1.5, 2.5},
		s: 0.5, p: []float64{0.25, 0.75}, defaultsCalled: 1}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("loaded\n%+v\nwant\n%+v", m, want)
	}

	for _, c := range []struct {
		name string
		edit func(d *tableData)
		want string
	}{
		{"missing data", func(d *tableData) { d.X = nil }, `data "x" is missing`},
		{"missing const", func(d *tableData) { d.P = nil }, `const "p" is missing: t.vi:9:7 declares it without a default, so the data must give it`},
		{"sizes disagree", func(d *tableData) { d.X = d.X[:1] }, `size "N": "x" has 1 entries but "c" has 2 entries`},
		{"given size disagrees", func(d *tableData) { d.K = 3 }, `size "K": "K" is 3 but "x" has 2 columns`},
		{"not inferred", func(d *tableData) { d.V, d.given, d.W, d.R = 0, nil, nil, nil },
			`size "V": cannot be inferred from the data; give it as "V", or give data "w" (its values range up to V, which is then their largest)`},
		{"not inferred, empty", func(d *tableData) {
			d.V, d.given, d.W, d.R, d.X, d.C = 0, nil, [][][2]int{}, [][]float64{}, [][]float64{}, [][][]int{}
		},
			`size "V": cannot be inferred from the data; give it as "V", or give data "w" (its values range up to V, which is then their largest)`},
		{"given size wins", func(d *tableData) { d.V = 2 }, `data "w"[1]: term 3 of entry 2 is outside 1..2`},
		{"int range", func(d *tableData) { d.C[1][0][1] = 3 }, `"c"`},
		{"bag range", func(d *tableData) { d.W[1][0][0] = 4 }, `"w"`},
		{"ragged length", func(d *tableData) { d.R[1] = nil }, `"r"`},
		{"simplex", func(d *tableData) { d.P[0] = 0.5 }, `"p"`},
		{"param", func(d *tableData) { d.Mu = []float64{1} }, `"mu"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := new(tableData)
			if err := d.table(new(tableModel)).Decode(strings.NewReader(good)); err != nil {
				t.Fatal(err)
			}
			c.edit(d)
			_, err := loadTable(d)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %s", err, c.want)
			}
		})
	}
}

// A size that is neither given nor the length of an array is the largest
// value of the int data whose range it ends (J = max(group) for
// `group : int[N] in 1..J`, V = the largest term id of a bag `of 1..V`).
func TestDataTableSizeFromRange(t *testing.T) {
	const good = `{"x": [[1, 2], [3, 4]], "c": [[[0, 1], [2, 2]], [[1, 1], [0, 0]]],
		"w": [[[1, 2], [4, 1]], [[2, 5]]], "r": [[0.5, 1.5], [2.5]], "p": [0.25, 0.75]}`
	d := new(tableData)
	if err := d.table(new(tableModel)).Decode(strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	m, err := loadTable(d)
	if err != nil {
		t.Fatal(err)
	}
	if m.v != 4 {
		t.Errorf("V = %d, want 4 (the largest term id)", m.v)
	}
	// A missing size with no data to infer it from names what would give it.
	d = new(tableData)
	if err := d.table(new(tableModel)).Decode(strings.NewReader(`{"p": [0.5, 0.5]}`)); err != nil {
		t.Fatal(err)
	}
	_, err = loadTable(d)
	want := `size "N": cannot be inferred from the data; give it as "N", or give data "x" (one of its dimensions is N) or data "c" (one of its dimensions is N) or data "w" (one of its dimensions is N) or data "r" (one of its dimensions is N)`
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

// CheckDomains runs its checks in order, skipping absent params.
func TestCheckDomains(t *testing.T) {
	pos := Domain{Lo: 0, Hi: 1e308, LoOpen: true, Text: "> 0"}
	err := CheckDomains([]DomainCheck{
		{Role: "param", Name: "a", Values: []float64(nil), Shape: []int{2}, Domain: pos, What: "w", Absent: true},
		{Role: "data", Name: "n", Values: []int{1, 2}, Shape: []int{2}, Domain: pos, What: "it is the n"},
		{Role: "const", Name: "s", Values: []float64{-1}, Domain: pos, What: "it is the sd"},
		{Role: "const", Name: "t", Values: []float64{-2}, Domain: pos, What: "never reached"},
	})
	if err == nil || !strings.Contains(err.Error(), `const "s" = -1: it is the sd, which must be > 0`) {
		t.Fatalf("error %v", err)
	}
}
