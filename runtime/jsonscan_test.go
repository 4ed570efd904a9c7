package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"

	"github.com/vigen-go/vigen/golden"
)

// The streaming decoder (DataTable.Decode) must read every document as
// the decoder it replaced did: SplitObject, then the Decode* function of
// each variable on its raw JSON. decodeRef is that decoder; the tests
// here run both on the same documents and compare the errors, the notes
// and the decoded Data.

// decodeRef is DataTable.Decode as it was before it streamed.
func decodeRef(t *DataTable, r io.Reader) error {
	keys := make([]string, 0, len(t.Vars))
	for _, v := range t.Vars {
		if !v.Fixed {
			keys = append(keys, v.Name)
		}
	}
	raw, err := SplitObject(r, keys)
	if err != nil {
		return err
	}
	if t.Given != nil {
		*t.Given = map[string]bool{}
	}
	for _, v := range t.Vars {
		if r, ok := raw[v.Name]; ok && v.Kind == KindSize && !v.Fixed {
			if *v.Data.(*int), err = DecodeSize(r, v.Name); err != nil {
				return err
			}
			(*t.Given)[v.Name] = true
		}
	}
	for _, v := range t.Vars {
		if r, ok := raw[v.Name]; ok && v.Kind != KindSize {
			if err := v.decodeRef(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeRef decodes raw into v's Data field, as DataVar.decode did.
func (v *DataVar) decodeRef(raw []byte) (err error) {
	ragged := v.Class == ClassRagged
	switch p := v.Data.(type) {
	case *float64:
		*p, err = DecodeReal(raw, v.Name)
	case **float64:
		*p, err = DecodeRealPtr(raw, v.Name)
	case *[]float64:
		*p, err = DecodeRealVector(raw, v.Name)
	case *[]int:
		*p, err = DecodeIntVector(raw, v.Name, math.MinInt, math.MaxInt)
	case *[][]float64:
		if ragged {
			*p, err = DecodeRaggedReal(raw, v.Name)
		} else {
			*p, err = DecodeRealRows(raw, v.Name)
		}
	case *[][]int:
		if ragged {
			*p, err = DecodeRaggedInt(raw, v.Name)
		} else {
			*p, err = DecodeIntRows(raw, v.Name)
		}
	case *[][][]float64:
		*p, err = DecodeRealCube(raw, v.Name)
	case *[][][]int:
		*p, err = DecodeIntCube(raw, v.Name)
	case *[][][2]int:
		*p, err = DecodeBag(raw, v.Name)
	default:
		panic(fmt.Sprintf("runtime: DataVar %q: no decoder for %T", v.Name, v.Data))
	}
	return err
}

// allData has a variable of every type a Data field can have.
type allData struct {
	N, K, V int
	A       float64
	B       *float64
	Vec     []float64
	IVec    []int
	Mat     [][]float64
	IMat    [][]int
	Rag     [][]float64
	IRag    [][]int
	Cube    [][][]float64
	ICube   [][][]int
	Bag     [][][2]int
	P       []float64
	given   map[string]bool
}

func (d *allData) table() *DataTable {
	return &DataTable{Given: &d.given, Vars: []DataVar{
		{Name: "N", Kind: KindSize, Data: &d.N},
		{Name: "K", Kind: KindSize, Data: &d.K},
		{Name: "V", Kind: KindSize, Data: &d.V},
		{Name: "two", Kind: KindSize, Fixed: true, SizeDefault: 2},
		{Name: "a", Data: &d.A},
		{Name: "b", Role: RoleConst, Data: &d.B},
		{Name: "v", Dims: []string{"N"}, Data: &d.Vec},
		{Name: "iv", Kind: KindInt, Dims: []string{"N"}, Data: &d.IVec},
		{Name: "x", Dims: []string{"N", "K"}, Data: &d.Mat},
		{Name: "ix", Kind: KindInt, Dims: []string{"N", "two"}, Data: &d.IMat},
		{Name: "r", Class: ClassRagged, Dims: []string{"N", "w"}, Data: &d.Rag},
		{Name: "ir", Kind: KindInt, Class: ClassRagged, Dims: []string{"N", "w"}, Data: &d.IRag},
		{Name: "c", Dims: []string{"N", "K", "K"}, Data: &d.Cube},
		{Name: "ic", Kind: KindInt, Dims: []string{"N", "K", "K"}, Data: &d.ICube},
		{Name: "w", Kind: KindInt, Class: ClassBag, Dims: []string{"N"}, Data: &d.Bag},
		{Name: "p", Role: RoleParam, Dims: []string{"K"}, Data: &d.P},
	}}
}

const allGood = `{"N": 2, "K": 2, "a": -1.5e-3, "b": 2, "v": [1, 2.5], "iv": [1, -2.0],
	"x": [[1, 2], [3, 4]], "ix": [[1, 2], [3, 4e0]], "r": [[0.5], [1, 2]], "ir": [[1], [2, 3]],
	"c": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "ic": [[[1]], [[2, 3]]],
	"w": [[[1, 2], [3, 1]], []], "p": [0.25, 0.75], "zz": {"q": [1, null, "s", true, false]}}`

// decodeBoth decodes doc with both decoders (reading it through wrap)
// and reports any difference in the errors, the notes and the Data.
func decodeBoth(t *testing.T, doc []byte, wrap func(io.Reader) io.Reader) {
	t.Helper()
	defer func(f func(string)) { Notes = f }(Notes)
	var notes []string
	Notes = func(msg string) { notes = append(notes, msg) }
	want, got := new(allData), new(allData)
	wantErr := decodeRef(want.table(), wrap(bytes.NewReader(doc)))
	wantNotes := notes
	notes = nil
	gotErr := got.table().Decode(wrap(bytes.NewReader(doc)))
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Errorf("%q:\nerror %v\nwant  %v", doc, gotErr, wantErr)
		return
	}
	if !reflect.DeepEqual(notes, wantNotes) {
		t.Errorf("%q:\nnotes %q\nwant  %q", doc, notes, wantNotes)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q:\ndata %+v\nwant %+v", doc, got, want)
	}
}

// streamSeeds are documents for the comparison: allGood, documents with
// an error of each kind, and deterministic mutations of them.
func streamSeeds() [][]byte {
	docs := []string{
		allGood,
		`{}`, ` {} `, `{"N": 0}`, `{"N": -0}`, `{"N": 1e3, "K": 3.0}`, `{"N": 1.5}`, `{"N": "2"}`, `{"N": 1e400}`,
		`{"N": 123456789012345678901234567890123456789012345}`, `{"N": 1e17}`, `{"N": [1]}`, `{"N": null}`,
		`{"a": null}`, `{"a": 1e999}`, `{"a": "x"}`, `{"b": -0}`, `{"b": [1]}`,
		`{"v": []}`, `{"v": null}`, `{"v": [1, null]}`, `{"v": [1, "2", [3]]}`, `{"v": [1e400, "x"]}`, `{"v": {"a": 1}}`,
		`{"iv": [0.5, "a"]}`, `{"iv": [1, 0.5, 2.5]}`, `{"iv": [9007199254740993]}`, `{"iv": [1e16, -1e16]}`, `{"iv": [-0, 1e2]}`,
		`{"x": []}`, `{"x": [[], []]}`, `{"x": [[1, 2], [3]]}`, `{"x": [[1, 2], 3]}`, `{"x": [[1], ["a"], [2, 3]]}`,
		`{"x": [[1, "a"], [2, 3, 4]]}`, `{"x": [[1, 2], [3, [4]], [5]]}`, `{"x": 3}`, `{"x": [[1e400]]}`,
		`{"ix": [[1, 2.5], [3, "x"]]}`, `{"ix": [[1, 2.5], [3]]}`, `{"ix": [[1, 2], [3, 0.5]]}`, `{"ix": [[1e300]]}`,
		`{"r": null}`, `{"r": 3}`, `{"r": [[1], null]}`, `{"r": [[1], [2, "a"]]}`, `{"r": [[], [1, 2, 3]]}`,
		`{"ir": [[1], [0.5], ["a"]]}`, `{"ir": [[0.5, "a"]]}`, `{"ir": [[1, 2], [3]]}`,
		`{"c": null}`, `{"c": "x"}`, `{"c": [[[1]], [[1, "a"]]]}`, `{"c": [[[1]], [[1], [2, 3]]]}`, `{"c": []}`, `{"c": [[]]}`,
		`{"ic": [[[1]], [[1]], [[1.5]]]}`, `{"ic": [[[1.5]], [[1, "a"]]]}`, `{"ic": [null]}`,
		`{"w": null}`, `{"w": [null]}`, `{"w": [[[1, 2, 3]]]}`, `{"w": [[[1]]]}`, `{"w": [[1, 2]]}`, `{"w": [[["1", 2]]]}`,
		`{"w": [[[1e300, 1]]]}`, `{"w": [[[2, 9223372036854775807]]]}`, `{"w": [[[1.5, "x", 3]]]}`, `{"w": [[[1, null]]]}`,
		`{"w": [[[1e400, 1]]]}`, `{"w": [[[-9223372036854775808, 1]]]}`, `{"w": [[], [[1, 1]], [[2, 2.5]]]}`, `{"w": {"a": 1}}`,
		`{"p": [1, "a"], "N": -1}`, `{"v": [1, "a"], "x": 3}`, `{"x": 3, "v": [1, "a"]}`, `{"K": "a", "N": "b"}`,
		`{"v": [1], "v": [2]}`, `{"zz": 1, "zz": 2, "v": "a"}`, `{"v": "a", "q": 1}`, `{"two": 2}`,
		`{"v": [1, 2]} x`, `{"v": [1, 2]} {}`, `{"v": [1,]}`, `{"v": [01]}`, `{"v": [-]}`, `{"v": [1.]}`, `{"v": [1e]}`,
		`{"v": [1e+]}`, `{"v": [.5]}`, `{"v": [+1]}`, `{"v": [tru]}`, `{"v": [nul]}`, `{"v": [fals]}`, `{"v": ["a` + "\n" + `b"]}`,
		`{"v": ["\x"]}`, `{"v": ["\u12g4"]}`, `{"\u004e": 2, "N": 3}`, `{"N\u0000": 1}`, "{\"\xff\": 1}", `{"é": 1, "e\u0301": 2}`,
		`{"v" 1}`, `{"v": 1 "x": 2}`, `{3: 3}`, `{"v": [1 2]}`, `{"v": {"a" 1}}`, `{"v": {"a": 1 "b": 2}}`, `{"v": {3: 1}}`,
		`[1]`, `"x"`, `3`, `null`, `true`, ``, "  \n ", "\n\n x", "\xef\xbb\xbf{}", `{`, `{"v"`, `{"v":`, `{"v": [`,
		`{"N": 3` + "\n\n  " + `"x": 1}`, "{\"N\": 3,\n\"x\": [1,]}", `{"v": [1, 2]}    `, `{"v": [1, 2]}` + "\n\t\r",
		`{"x": [[1, 2], [3, 4]]}` + " \n\x00",
		`{"v": [` + strings.Repeat("[", 10001) + `]}`, `{"v": ` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}`,
		`{"v": ` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	}
	out := make([][]byte, 0, len(docs)+4000)
	for _, d := range docs {
		out = append(out, []byte(d))
	}
	alphabet := []byte(`[]{}",:.-+eE0123456789 nulltrue` + "\n\x00\xff\\")
	rng := rand.New(rand.NewPCG(17, 18))
	for i := 0; i < 4000; i++ {
		b := []byte(docs[rng.IntN(min(len(docs), 90))])
		for k := rng.IntN(3) + 1; k > 0; k-- {
			switch pos := rng.IntN(len(b) + 1); rng.IntN(4) {
			case 0, 1: // insert
				b = append(b[:pos], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[pos:]...)...)
			case 2: // delete
				if pos < len(b) {
					b = append(b[:pos], b[pos+1:]...)
				}
			default: // truncate
				if rng.IntN(4) == 0 {
					b = b[:pos]
				}
			}
		}
		out = append(out, b)
	}
	return out
}

func asIs(r io.Reader) io.Reader { return r }

// TestStreamDecodeSame: the streaming decoder reads every seed document
// as the decoder it replaced did, read at once or a byte at a time.
func TestStreamDecodeSame(t *testing.T) {
	seeds := streamSeeds()
	for _, doc := range seeds {
		decodeBoth(t, doc, asIs)
	}
	for _, doc := range seeds[:200] {
		decodeBoth(t, doc, iotest.OneByteReader)
		decodeBoth(t, doc, iotest.HalfReader)
	}
	if t.Failed() {
		return
	}
	// The decoded values.
	d := new(allData)
	if err := d.table().Decode(strings.NewReader(allGood)); err != nil {
		t.Fatal(err)
	}
	if d.N != 2 || d.A != -1.5e-3 || *d.B != 2 || d.IMat[1][1] != 4 || d.Bag[0][1] != [2]int{3, 1} || len(d.Bag[1]) != 0 {
		t.Errorf("decoded %+v", d)
	}
}

// FuzzStreamDecode: the streaming decoder agrees with the old one on any
// input (go test -fuzz FuzzStreamDecode ./runtime searches).
func FuzzStreamDecode(f *testing.F) {
	for _, b := range streamSeeds()[:300] {
		if len(b) < 1000 { // not the deeply nested ones, slow to minimize
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeBoth(t, b, asIs)
		decodeBoth(t, b, iotest.OneByteReader)
	})
}

// TestStreamDecodeLarge: documents larger than the scanner's buffer, with
// numbers and strings across its boundaries and errors far into them,
// keep their positions and messages.
func TestStreamDecodeLarge(t *testing.T) {
	golden.SlowTier(t)
	var b strings.Builder
	b.WriteString("{\"N\": 3000,\n\"K\": 40, \"zz\": \"" + strings.Repeat("ab\\n\\u00e9", 9000) + "\",\n\"x\": [")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("[")
		for j := range 40 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
		}
		b.WriteString("]")
	}
	b.WriteString("],\n\"v\": [" + strings.Repeat("1, ", 2999) + "1]}\n")
	good := b.String()
	if len(good) < 4*scanBufSize {
		t.Fatalf("only %d bytes", len(good))
	}
	decodeBoth(t, []byte(good), asIs)
	decodeBoth(t, []byte(good), iotest.HalfReader)
	for _, edit := range []struct{ old, new string }{
		{"]}\n", "]]\n"},                  // the end
		{"]}\n", "]} x\n"},                // after the end
		{"]}\n", "]} x\ny\n"},             // after the end
		{"1, 1]}", "1, 1.]}"},             // in the last number
		{"[1, 1, ", "[1, \"a\", "},        // a string among numbers
		{"],\n[", "], [1],\n["},           // a ragged row
		{"],\n[", "]\n["},                 // a missing comma
		{"\\u00e9", "\\u00g9"},            // a bad escape
		{"\"K\": 40", "\"K\": 41"},        // more elements expected than given
		{"\"N\": 3000", "\"N\": 2000"},    // fewer
		{"\"N\": 3000,", "\"N\": 1e400,"}, // none
	} {
		doc := strings.Replace(good, edit.old, edit.new, 1)
		if edit.old == "]}\n" || edit.old == "1, 1]}" {
			doc = good[:strings.LastIndex(good, edit.old)] + edit.new + good[strings.LastIndex(good, edit.old)+len(edit.old):]
		}
		decodeBoth(t, []byte(doc), asIs)
		decodeBoth(t, []byte(doc), iotest.HalfReader)
	}
	// The matrix is read into one array, with the rows slicing it.
	defer func(f func(string)) { Notes = f }(Notes)
	Notes = nil
	d := new(allData)
	if err := d.table().Decode(strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	if len(d.Mat) != 3000 || uintptr(unsafe.Pointer(&d.Mat[1][0]))-uintptr(unsafe.Pointer(&d.Mat[0][0])) != 40*8 {
		t.Errorf("rows do not share an array")
	}
}

// failReader returns its data, then err.
type failReader struct {
	data []byte
	err  error
}

func (r *failReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestStreamDecodeReadErrors: a read error, and a document over
// DataLimit, are reported as before, ahead of what the part read holds.
func TestStreamDecodeReadErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, doc := range []string{"", "  ", `{"v": [1, 2]}`, `{"v": [1, "a"]`, `{"v": [1, 2]} x`, `x`, `{"v": [1,]`, `  [`} {
		for _, wrap := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { b, _ := io.ReadAll(r); return &failReader{b, boom} },
			func(r io.Reader) io.Reader { return iotest.DataErrReader(&failReader{mustRead(r), boom}) },
			func(r io.Reader) io.Reader { return iotest.OneByteReader(&failReader{mustRead(r), boom}) },
			iotest.DataErrReader,
		} {
			decodeBoth(t, []byte(doc), wrap)
		}
	}
	defer func(old int64) { MaxDataBytes = old }(MaxDataBytes)
	for _, limit := range []int64{1, 5, 12, 13, 14, 20} {
		MaxDataBytes = limit
		for _, doc := range []string{`{"v": [1, 2]}`, ` {"v": [1, 2]}`, `{"v": [1, 2]} `, `{"v": 1 2}`, `            x`, `     `, `{"v": "`} {
			decodeBoth(t, []byte(doc), asIs)
			decodeBoth(t, []byte(doc), iotest.OneByteReader)
		}
	}
}

func mustRead(r io.Reader) []byte {
	b, err := io.ReadAll(r)
	if err != nil {
		panic(err)
	}
	return b
}

// TestStreamDecodeEndless: an endless input is refused as before, having
// read little of it.
func TestStreamDecodeEndless(t *testing.T) {
	z := &zeros{}
	d := new(allData)
	err := d.table().Decode(z)
	wantErr(t, err, `data: invalid JSON at line 1, column 1: invalid character '\x00' looking for beginning of value`)
	if z.n > 1<<20 {
		t.Errorf("read %d bytes", z.n)
	}
	defer func(old int64) { MaxDataBytes = old }(MaxDataBytes)
	MaxDataBytes = 1 << 20
	err = d.table().Decode(&spaces{})
	wantErr(t, err, `data: the input is larger than 1048576 bytes (runtime.MaxDataBytes); is it a JSON file?`)
	err = d.table().Decode(io.MultiReader(strings.NewReader(`{"v": [1, 2]}`), &spaces{}))
	wantErr(t, err, `data: the input is larger than 1048576 bytes (runtime.MaxDataBytes); is it a JSON file?`)
}

// TestStreamDecodeNoDecoder: a Data field of a type with no decoder
// panics as before, when its key is given and nothing before it fails.
func TestStreamDecodeNoDecoder(t *testing.T) {
	var s string
	var n int
	table := func() *DataTable {
		return &DataTable{Vars: []DataVar{{Name: "s", Data: &s}, {Name: "n", Data: new(float64)}}}
	}
	if err := table().Decode(strings.NewReader(`{"n": 1}`)); err != nil {
		t.Fatal(err)
	}
	if err := table().Decode(strings.NewReader(`{"s": 1, "n": [}`)); err == nil {
		t.Fatal("no syntax error")
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), `DataVar "s": no decoder for *string`) {
			t.Errorf("panic %v", p)
		}
	}()
	_ = n
	table().Decode(strings.NewReader(`{"n": 1, "s": "x"}`))
}
