package runtime

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// matrixDoc returns a data document {"N": n, "P": p, "x": [[...], ...]}
// of normal deviates written as strconv writes them (as a generator of
// data files would).
func matrixDoc(n, p int, sizes bool) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var b []byte
	b = append(b, '{')
	if sizes {
		b = append(b, `"N": `+strconv.Itoa(n)+`, "P": `+strconv.Itoa(p)+`, `...)
	}
	b = append(b, `"x": [`...)
	for i := range n {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, '[')
		for j := range p {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendFloat(b, rng.NormFloat64(), 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return append(b, "]}\n"...)
}

// matrixData is the Data of a model with data x : real[N, P].
type matrixData struct {
	N, P  int
	X     [][]float64
	given map[string]bool
}

func (d *matrixData) table(m *matrixModel) *DataTable {
	return &DataTable{Given: &d.given, Vars: []DataVar{
		{Name: "N", Kind: KindSize, Data: &d.N, Model: &m.n},
		{Name: "P", Kind: KindSize, Data: &d.P, Model: &m.p},
		{Name: "x", Dims: []string{"N", "P"}, Data: &d.X, Model: &m.x},
	}}
}

type matrixModel struct {
	n, p int
	x    []float64
}

// BenchmarkDecodeRealMatrix: a data matrix read by DataTable.Decode (the
// streaming decoder, with the sizes given before the matrix or not), by
// the decoder it replaced (SplitObject, then DecodeRealRows), and by
// encoding/json into [][]float64, from the same bytes.
func BenchmarkDecodeRealMatrix(b *testing.B) {
	const n, p = 4000, 50
	for _, sizes := range []bool{true, false} {
		doc := matrixDoc(n, p, sizes)
		name := "stream"
		if !sizes {
			name = "stream-nosizes"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				d := new(matrixData)
				if err := d.table(new(matrixModel)).Decode(bytes.NewReader(doc)); err != nil || len(d.X) != n {
					b.Fatal(err)
				}
			}
		})
	}
	doc := matrixDoc(n, p, true)
	b.Run("old", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			raw, err := SplitObject(bytes.NewReader(doc), []string{"N", "P", "x"})
			if err != nil {
				b.Fatal(err)
			}
			if x, err := DecodeRealRows(raw["x"], "x"); err != nil || len(x) != n {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			var v struct {
				N, P int
				X    [][]float64 `json:"x"`
			}
			if err := json.Unmarshal(doc, &v); err != nil || len(v.X) != n {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeMatrixMemory: a matrix is decoded into one array of its size
// (at once when the sizes come first and the input's length is known); it
// allocates little besides, and Load copies it into the Model.
func TestDecodeMatrixMemory(t *testing.T) {
	const n, p = 3000, 50
	for _, c := range []struct {
		name  string
		sizes bool
	}{
		{"sizes first, length known", true},
		{"no sizes", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := matrixDoc(n, p, c.sizes)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			d := new(matrixData)
			if err := d.table(new(matrixModel)).Decode(bytes.NewReader(doc)); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			flat := int64(n * p * 8)
			alloc := int64(after.TotalAlloc - before.TotalAlloc)
			limit := flat + flat/4 + 1<<20 // the array, the rows, the scanner's buffer
			if !c.sizes {
				limit += flat + flat/4 // the chunks before the array
			}
			if alloc > limit {
				t.Errorf("allocated %d bytes for a %d-byte array (want at most %d)", alloc, flat, limit)
			}
			m := new(matrixModel)
			tab := d.table(m)
			if _, err := tab.BindSizes(); err != nil {
				t.Fatal(err)
			}
			if err := tab.Load(); err != nil {
				t.Fatal(err)
			}
			if len(m.x) != n*p || &m.x[0] == &d.X[0][0] || m.x[p] != d.X[1][0] || m.x[n*p-1] != d.X[n-1][p-1] {
				t.Errorf("the Model's x is not a copy of the decoded array")
			}
		})
	}
}

// TestInputSize: Decode expects the rest of a regular file, or of a reader
// with a Len method; of a pipe, nothing.
func TestInputSize(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "data*.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc := matrixDoc(10, 3, true)
	if _, err := f.Write(doc); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if got := inputSize(f); got != int64(len(doc)-5) {
		t.Errorf("file: %d, want %d", got, len(doc)-5)
	}
	if got := inputSize(strings.NewReader("abc")); got != 3 {
		t.Errorf("strings.Reader: %d", got)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := inputSize(r); got != -1 {
		t.Errorf("pipe: %d", got)
	}
	if got := inputSize(iotest.HalfReader(f)); got != -1 {
		t.Errorf("HalfReader: %d", got)
	}
}
