package runtime

import (
	"strings"
	"testing"
)

// defData and defModel are the Data and Model a generated package would
// have for
//
//	size N, K = 3, J = 4
//	data x : real[N, 2]              (a literal dimension: the fixed size "2")
//	data g : int[N] in 1..J
//	param mu : real[K]
type defData struct {
	N, K, J int
	X       [][]float64
	G       []int
	Mu      []float64
	given   map[string]bool
}

type defModel struct {
	n, k, j, size2 int
	x, mu          []float64
	g              []int
}

func (d *defData) table(m *defModel) *DataTable {
	return &DataTable{Given: &d.given, Vars: []DataVar{
		{Name: "N", Kind: KindSize, Data: &d.N, Model: &m.n},
		{Name: "K", Kind: KindSize, SizeDefault: 3, Data: &d.K, Model: &m.k},
		{Name: "J", Kind: KindSize, SizeDefault: 4, Data: &d.J, Model: &m.j},
		{Name: "2", Kind: KindSize, SizeDefault: 2, Fixed: true, Model: &m.size2},
		{Name: "x", Dims: []string{"N", "2"}, Data: &d.X, Model: &m.x},
		{Name: "g", Kind: KindInt, Dims: []string{"N"}, Range: []Bound{{Value: 1}, {Size: "J"}}, Data: &d.G, Model: &m.g},
		{Name: "mu", Role: RoleParam, Dims: []string{"K"}, Data: &d.Mu, Model: &m.mu},
	}}
}

func loadDef(t *testing.T, js string) (*defModel, error) {
	t.Helper()
	old := Notes
	var notes []string
	Notes = func(s string) { notes = append(notes, s) }
	defer func() { Notes = old }()
	d := new(defData)
	m := new(defModel)
	tab := d.table(m)
	if err := tab.Decode(strings.NewReader(js)); err != nil {
		return nil, err
	}
	if strings.Contains(js, `"2"`) && (len(notes) != 1 || !strings.Contains(notes[0], `"2"`)) {
		t.Errorf("notes %q, want one ignoring the key \"2\"", notes)
	}
	if _, err := tab.BindSizes(); err != nil {
		return nil, err
	}
	return m, tab.Load()
}

// A size's default is taken when neither the data file nor an array's
// length gives the size, before the largest value of int data ranging up
// to it; a literal dimension is fixed, and an array of another length is
// an error naming the array and the fixed length.
func TestSizeDefaults(t *testing.T) {
	const x = `"x": [[1, 2], [3, 4], [5, 6]], "g": [1, 2, 1]`
	for _, c := range []struct {
		name    string
		js      string
		k, j, n int
	}{
		{"defaults", `{` + x + `}`, 3, 4, 3},
		{"given wins", `{"K": 5, "J": 2, ` + x + `}`, 5, 2, 3},
		{"array length wins", `{"mu": [1, 2, 3, 4, 5, 6], ` + x + `}`, 6, 4, 3},
		{"default beats the range", `{"x": [[1, 2]], "g": [3]}`, 3, 4, 1},
		{"no data key for a literal dimension", `{"2": 5, ` + x + `}`, 3, 4, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := loadDef(t, c.js)
			if err != nil {
				t.Fatal(err)
			}
			if m.k != c.k || m.j != c.j || m.n != c.n || m.size2 != 2 {
				t.Errorf("N, K, J, 2 = %d, %d, %d, %d; want %d, %d, %d, 2", m.n, m.k, m.j, m.size2, c.n, c.k, c.j)
			}
		})
	}
	for _, c := range []struct{ name, js, want string }{
		{"fixed columns", `{"x": [[1, 2, 3], [4, 5, 6]], "g": [1, 1]}`, `"x" has 3 columns, but its type fixes that length at 2`},
		{"fixed, a later row", `{"x": [[1, 2], [4, 5, 6]], "g": [1, 1]}`, `"x"`},
		{"range past the default", `{"x": [[1, 2]], "g": [5]}`, `"g"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadDef(t, c.js)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %s", err, c.want)
			}
			t.Log(err)
		})
	}
}
