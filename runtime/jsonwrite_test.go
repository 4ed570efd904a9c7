package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/vigen-go/vigen/golden"
)

// jwCompared counts the values compared with json.MarshalIndent.
var jwCompared int

// jwSame checks that WriteJSONIndent writes exactly what
// json.MarshalIndent(v, "", " ") returns, or fails as json.Marshal does.
func jwSame(t *testing.T, name string, v any) {
	t.Helper()
	jwCompared++
	want, wantErr := json.MarshalIndent(v, "", " ")
	var buf bytes.Buffer
	err := WriteJSONIndent(&buf, v)
	if wantErr != nil || err != nil {
		if !jwSameError(err, wantErr) {
			t.Errorf("%s: error %#v (%v), json.MarshalIndent's %#v (%v)", name, err, err, wantErr, wantErr)
		}
		return
	}
	if got := buf.Bytes(); !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-60)
		t.Errorf("%s: differs from json.MarshalIndent at byte %d (of %d, want %d):\n got …%s…\nwant …%s…",
			name, i, len(got), len(want), got[lo:min(len(got), i+60)], want[lo:min(len(want), i+60)])
	}
}

func jwSameError(got, want error) bool {
	if got == nil || want == nil || reflect.TypeOf(got) != reflect.TypeOf(want) || got.Error() != want.Error() {
		return false
	}
	var gm, wm *json.MarshalerError
	if errors.As(want, &wm) {
		return errors.As(got, &gm) && gm.Type == wm.Type && reflect.TypeOf(gm.Err) == reflect.TypeOf(wm.Err)
	}
	var gt, wt *json.UnsupportedTypeError
	if errors.As(want, &wt) {
		return errors.As(got, &gt) && gt.Type == wt.Type
	}
	var gv, wv *json.UnsupportedValueError
	if errors.As(want, &wv) {
		return errors.As(got, &gv) && gv.Str == wv.Str && gv.Value.IsValid() == wv.Value.IsValid() &&
			(!wv.Value.IsValid() || gv.Value.Type() == wv.Value.Type())
	}
	return true
}

// --- types for the table

type jwText struct{ S string } // MarshalText with a value receiver

func (x jwText) MarshalText() ([]byte, error) { return []byte("text<" + x.S + ">"), nil }

type jwPtrText struct{ S string } // MarshalText with a pointer receiver

func (x *jwPtrText) MarshalText() ([]byte, error) { return []byte("ptr&" + x.S), nil }

type jwMarsh struct{ N int } // MarshalJSON with a value receiver, spaced, nested output

func (x jwMarsh) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(` { "n" : %d, "list": [ 1, {}, [], {"a": [ ]}, "<\u2028>" ], "o": {"x": {"y": null}} } `, x.N)), nil
}

type jwPtrMarsh struct{ N int } // MarshalJSON with a pointer receiver

func (x *jwPtrMarsh) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`[%d,[%d]]`, x.N, x.N)), nil
}

type jwBadMarsh struct{}

func (jwBadMarsh) MarshalJSON() ([]byte, error) { return nil, errors.New("bad marshal") }

type jwInvalidMarsh struct{}

func (jwInvalidMarsh) MarshalJSON() ([]byte, error) { return []byte(`{"a":}`), nil }

type jwEmptyMarsh struct{}

func (jwEmptyMarsh) MarshalJSON() ([]byte, error) { return nil, nil }

type jwBadText struct{}

func (jwBadText) MarshalText() ([]byte, error) { return nil, errors.New("bad text") }

type jwKeyText struct{ A, B int } // a map key marshaled as text

func (k jwKeyText) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("%d/%d", k.A, k.B)), nil }

type jwZeroer struct{ V int } // IsZero says 1 is zero

func (z jwZeroer) IsZero() bool { return z.V == 1 }

type jwPtrZeroer struct{ V int }

func (z *jwPtrZeroer) IsZero() bool { return z.V == 2 }

type jwOmit struct {
	B    bool                       `json:"b,omitempty"`
	I    int                        `json:"i,omitempty"`
	I8   int8                       `json:"i8,omitempty"`
	U    uint                       `json:"u,omitempty"`
	U64  uint64                     `json:"u64,omitempty"`
	Up   uintptr                    `json:"up,omitempty"`
	F32  float32                    `json:"f32,omitempty"`
	F    float64                    `json:"f,omitempty"`
	S    string                     `json:"s,omitempty"`
	Sl   []int                      `json:"sl,omitempty"`
	M    map[string]int             `json:"m,omitempty"`
	P    *int                       `json:"p,omitempty"`
	If   any                        `json:"if,omitempty"`
	A0   [0]int                     `json:"a0,omitempty"`
	A2   [2]int                     `json:"a2,omitempty"`
	St   struct{}                   `json:"st,omitempty"`
	T    time.Time                  `json:"t,omitempty"`
	D    time.Duration              `json:"d,omitempty"`
	Raw  json.RawMessage            `json:"raw,omitempty"`
	Fac  *Factor                    `json:"fac,omitempty"`
	MS   map[string][]byte          `json:",omitempty"`
	Zs   struct{ X int }            `json:"zs,omitzero"`
	Zt   time.Time                  `json:"zt,omitzero"`
	Zp   *int                       `json:"zp,omitzero"`
	Zsl  []int                      `json:"zsl,omitzero"`
	Zz   jwZeroer                   `json:"zz,omitzero"`
	Zpz  jwPtrZeroer                `json:"zpz,omitzero"`
	Zpp  *jwZeroer                  `json:"zpp,omitzero"`
	Zif  interface{ IsZero() bool } `json:"zif,omitzero"`
	Both float64                    `json:"both,omitempty,omitzero"`
}

type jwQuoted struct {
	I  int         `json:"i,string"`
	F  float64     `json:"f,string"`
	F3 float32     `json:",string"`
	B  bool        `json:"b,string"`
	S  string      `json:"s,string"`
	P  *int        `json:"p,string"`
	NP *int        `json:"np,string"`
	N  json.Number `json:"n,string"`
	Sl []int       `json:"sl,string"` // not quoted: only scalars are
	U  uint8       `json:"u,string,omitempty"`
}

type jwInner struct {
	A    int    `json:"a"`
	B    string // untagged
	C    int    `json:"c"`
	Deep string `json:"deep"`
}

type jwInner2 struct {
	A int    // untagged A: the tagged one at the same depth wins? (no: jwInner's is tagged "a", this is "A")
	C int    `json:"c"` // ties with jwInner.C: both hidden
	D string `json:"d"`
}

type jwDeeper struct{ Deep string }

type jwMid struct {
	jwDeeper
	M int `json:"m"`
}

type jwNamedInt int

type jwunexported struct {
	Visible int `json:"visible"`
	hidden  int
}

type jwEmbed struct {
	jwInner
	*jwInner2
	jwMid
	Tagged     jwDeeper `json:"tagged"` // a named, not promoted, field
	jwNamedInt          // unexported embedded non-struct: ignored
	Named      jwText   `json:"named"`
	jwunexported
	Override int `json:"d"` // shallower: hides jwInner2.D
	Ignored  int `json:"-"`
	Dash     int `json:"-,"`
	BadTag   int `json:"a\\b"` // invalid name: the field's
	HTML     int `json:"<&>"`
	Uni      int `json:"Ünïcödé"`
	private  int
}

type JwExportedInt int

type jwEmbedExported struct {
	JwExportedInt
	fmt.Stringer // an embedded interface is a field named by its type
}

type jwNode struct {
	Name string    `json:"name"`
	Kids []*jwNode `json:"kids,omitempty"`
}

type jwCycle struct{ Next *jwCycle }

type jwBytes []byte

type jwByte byte

type jwAddr struct {
	V  jwPtrText  `json:"v"`
	M  jwPtrMarsh `json:"m"`
	PV *jwPtrText `json:"pv"`
}

type jwStr string

func jwTable() []struct {
	name string
	v    any
} {
	negZero := math.Copysign(0, -1)
	n := 7
	tm := time.Date(2024, 2, 29, 12, 30, 45, 123456789, time.UTC)
	cyc := &jwCycle{}
	cyc.Next = cyc
	cycMap := map[string]any{}
	cycMap["self"] = cycMap
	cycSlice := make([]any, 1)
	cycSlice[0] = cycSlice
	type kv = map[string]any
	floats := []float64{0, negZero, 1, -1, 0.1, 1e21, 1e-7, 5e-324, 1e20, 123456789.123, 1e-6, 9.999999e-7,
		math.Nextafter(1e21, 0), math.Nextafter(1e-6, 0), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		1e-10, 1.5e300, -2.5e-300, 100, 1e6, 12345678912345678, 0.000123, 1 / 3.0, 2.0 / 3e-9}
	float32s := []float32{0, float32(negZero), 1e21, 1e-7, 1e20, 0.1, 3.4e38, 1e-45, math.Nextafter32(1e21, 0),
		math.Nextafter32(1e-6, 0), 1e-6, 16777216, 123456.79}
	strs := []string{"", "plain", `a"b\c/d`, "\b\f\n\r\t\x00\x01\x1f\x7f", "<script>&amp;</script>",
		"\u2028\u2029 line seps", "\xff", "a\xc3", "\xc3(", "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 too big",
		"日本語 ünï", "\U0001F600 emoji", "\ufffd replacement", "tab\tend", strings.Repeat("long<", 5000)}
	var table []struct {
		name string
		v    any
	}
	add := func(name string, v any) {
		table = append(table, struct {
			name string
			v    any
		}{name, v})
	}
	for _, f := range floats {
		add(fmt.Sprintf("float64 %g", f), f)
		add(fmt.Sprintf("-float64 %g", f), -f)
	}
	for _, f := range float32s {
		add(fmt.Sprintf("float32 %g", f), f)
	}
	add("floats in a slice", floats)
	add("float32s in a slice", float32s)
	add("floats in a map", kv{"a": floats, "b": float32s})
	for _, bad := range []any{math.NaN(), math.Inf(1), math.Inf(-1), float32(math.Inf(1)), float32(math.NaN())} {
		add(fmt.Sprintf("bad float %v", bad), bad)
		add(fmt.Sprintf("bad float %v in a struct", bad), struct{ X, Y any }{1, bad})
		add(fmt.Sprintf("bad float %v in a slice", bad), []any{1.0, []any{bad}})
	}
	add("NaN in a Factor", NewFactor("Dirichlet", []int{2}, "alpha", []float64{1, math.NaN()}))
	for _, s := range strs {
		add(fmt.Sprintf("string %q", s), s)
		add(fmt.Sprintf("string %q as key", s), map[string]int{s: 1, "x" + s: 2})
	}
	add("named string", jwStr("<named>"))
	add("named string keys", map[jwStr]int{"b": 1, "a": 2})
	for _, x := range []any{true, false, 0, -1, math.MaxInt64, math.MinInt64, int8(-128), int16(300), int32(-7),
		uint(0), uint8(255), uint16(65535), uint32(1 << 31), uint64(math.MaxUint64), uintptr(42)} {
		add(fmt.Sprintf("%T %v", x, x), x)
	}
	add("nil", nil)
	add("nil pointer", (*int)(nil))
	add("pointer", &n)
	add("pointer to pointer", func() **int { p := &n; return &p }())
	add("nil slice", []int(nil))
	add("empty slice", []int{})
	add("nil map", map[string]int(nil))
	add("empty map", map[string]int{})
	add("empty array", [0]int{})
	add("array", [3]int{1, 2, 3})
	add("empty struct", struct{}{})
	add("struct of unexported fields", struct{ a, b int }{1, 2})
	add("nested empties", kv{"a": []any{}, "b": kv{}, "c": nil, "d": []int(nil), "e": map[string]int(nil),
		"f": []any{[]any{}, kv{}, []any{[]any{kv{}}}}, "g": struct{}{}, "h": [0]string{}, "i": &struct{}{}})
	add("matrix with empty rows", [][]float64{{}, nil, {1}, {2, 3}})
	add("deep nesting", func() any {
		var v any = kv{}
		for i := 0; i < 60; i++ {
			if i%2 == 0 {
				v = []any{v, i}
			} else {
				v = kv{"k": v, "e": []any{}}
			}
		}
		return v
	}())
	add("mixed map[string]any", kv{"int": 1, "float": 2.5, "string": "s", "bool": true, "nil": nil,
		"slice": []any{1, "two", 3.0, nil, []float64{4}}, "map": map[string]float64{"z": 1, "a": 2},
		"factor": NewFactor("Gamma", []int{2}, "shape", []float64{1, 2}, "rate", []float64{3, 4}),
		"<html>": "&", "time": tm, "dur": 90 * time.Second})
	add("[]byte nil", []byte(nil))
	add("[]byte empty", []byte{})
	add("[]byte", []byte("hello, world\x00\xff"))
	add("[]byte long", bytes.Repeat([]byte{0, 1, 2, 250, 251}, 30000))
	add("named []byte", jwBytes("abc"))
	add("[]named byte", []jwByte("abcd"))
	add("[4]byte", [4]byte{1, 2, 3, 4})
	add("bytes in a map", map[string][]byte{"b": []byte("x"), "a": nil})
	add("RawMessage", json.RawMessage(` {"b" : [1, 2, {}], "a":"<x>", "e": [ ] } `))
	add("RawMessage nil", json.RawMessage(nil))
	add("RawMessage nested", kv{"x": []any{json.RawMessage(`{"p":{"q":[1,{"r":[]}]}}`), json.RawMessage(`"s"`)}})
	add("RawMessage invalid", kv{"x": json.RawMessage(`{"p":`)})
	add("json.Number", []json.Number{"12.5e3", "-0", "", "1E+2"})
	add("json.Number invalid", json.Number("abc"))
	add("time.Duration", []time.Duration{0, time.Millisecond, -time.Hour})
	add("time.Time", tm)
	add("*time.Time nil", (*time.Time)(nil))
	add("TextMarshaler", jwText{"a&b"})
	add("TextMarshaler in a map", map[string]jwText{"k": {"v"}})
	add("pointer TextMarshaler, not addressable", jwPtrText{"x"})
	add("pointer TextMarshaler in a map (not addressable)", map[string]jwPtrText{"k": {"v"}})
	add("pointer TextMarshaler in a slice (addressable)", []jwPtrText{{"a"}, {"b"}})
	add("pointer TextMarshaler through a pointer", &jwPtrText{"p"})
	add("nil pointer TextMarshaler", (*jwPtrText)(nil))
	add("Marshaler", jwMarsh{3})
	add("Marshaler nested", kv{"a": []any{kv{"m": jwMarsh{1}}, jwMarsh{2}}})
	add("Marshaler pointer receiver, not addressable", jwPtrMarsh{4})
	add("Marshaler pointer receiver, addressable", []jwPtrMarsh{{5}, {6}})
	add("Marshaler pointer receiver, in a map", map[string]jwPtrMarsh{"k": {7}})
	add("Marshaler pointer receiver, through a pointer", kv{"p": &jwPtrMarsh{8}, "nil": (*jwPtrMarsh)(nil)})
	add("addressable fields", &jwAddr{V: jwPtrText{"v"}, M: jwPtrMarsh{9}, PV: &jwPtrText{"pv"}})
	add("not addressable fields", jwAddr{V: jwPtrText{"v"}, M: jwPtrMarsh{9}})
	add("Marshaler error", []any{jwBadMarsh{}})
	add("Marshaler invalid output", kv{"x": jwInvalidMarsh{}})
	add("Marshaler empty output", jwEmptyMarsh{})
	add("TextMarshaler error", kv{"x": []jwBadText{{}}})
	add("int keys", map[int]string{10: "a", 2: "b", -1: "c", 0: "d"})
	add("uint keys", map[uint8]int{200: 1, 3: 2})
	add("TextMarshaler keys", map[jwKeyText]int{{1, 2}: 1, {10, 0}: 2, {0, 3}: 3})
	add("pointer TextMarshaler keys", map[*jwPtrText]int{{"b"}: 1, {"a"}: 2})
	add("unsupported chan", make(chan int))
	add("unsupported func", kv{"f": func() {}})
	add("unsupported complex", []any{1i})
	add("unsupported map key", map[[2]int]int{{1, 2}: 3})
	add("unsupported in an empty slice", []chan int{})
	add("cycle through pointers", cyc)
	add("cycle through a map", cycMap)
	add("cycle through a slice", cycSlice)
	add("recursive type", &jwNode{Name: "root", Kids: []*jwNode{{Name: "a"}, {Name: "b", Kids: []*jwNode{{Name: "c"}}}}})
	add("omitempty, all empty", jwOmit{})
	add("omitempty, all empty, by pointer", &jwOmit{})
	one := 1
	add("omitempty, all set", jwOmit{B: true, I: -1, I8: 1, U: 1, U64: 1, Up: 1, F32: 0.5, F: negZero, S: "s",
		Sl: []int{}, M: map[string]int{}, P: &one, If: 0, A2: [2]int{}, T: tm, D: 1, Raw: json.RawMessage(`{}`),
		Fac: &Factor{}, MS: map[string][]byte{"a": nil}, Zs: struct{ X int }{1}, Zt: tm, Zp: new(int), Zsl: []int{},
		Zz: jwZeroer{1}, Zpz: jwPtrZeroer{2}, Zpp: &jwZeroer{1}, Zif: jwZeroer{1}, Both: 1})
	add("omitzero, not zero", jwOmit{Zz: jwZeroer{0}, Zpz: jwPtrZeroer{0}, Zpp: &jwZeroer{0}, Zif: &jwZeroer{3}})
	add("omitzero, in a slice (addressable)", []jwOmit{{Zpz: jwPtrZeroer{2}}, {Zpz: jwPtrZeroer{3}}})
	add("omitzero, nil pointer in an interface", jwOmit{Zif: (*jwZeroer)(nil)})
	add("string option", jwQuoted{I: -3, F: 1e-9, F3: 2.5, B: true, S: `a"<b>`, P: &n, N: "1.5", Sl: []int{1}, U: 4})
	add("string option, zero", &jwQuoted{})
	add("string option, bad float", jwQuoted{F: math.Inf(-1)})
	add("embedded", jwEmbed{jwInner: jwInner{A: 1, B: "b", C: 3, Deep: "shallow"}, jwInner2: &jwInner2{A: 4, C: 5, D: "d"},
		jwMid: jwMid{jwDeeper: jwDeeper{Deep: "deep"}, M: 6}, Tagged: jwDeeper{"t"}, jwNamedInt: 7, Named: jwText{"n"},
		jwunexported: jwunexported{Visible: 8, hidden: 9}, Override: 10, Ignored: 11, Dash: 12, BadTag: 13, HTML: 14, Uni: 15, private: 16})
	add("embedded nil pointer", jwEmbed{})
	add("embedded by pointer", &jwEmbed{jwInner2: &jwInner2{}})
	add("embedded exported non-struct and interface", jwEmbedExported{JwExportedInt: 3, Stringer: time.Second})
	add("embedded nil interface", jwEmbedExported{})
	add("struct with interface fields", struct {
		A any
		B fmt.Stringer
		C error
	}{A: []any{1, "x"}, B: jwMarshalerStringer{}, C: nil})
	add("anonymous struct pointer slice", []*struct {
		X int `json:"x"`
	}{{1}, nil, {3}})
	add("map of pointers", map[string]*Factor{"nil": nil, "f": NewFactor("Beta", nil)})
	add("interface holding pointer to struct", any(&jwInner{A: 1}))
	return table
}

type jwMarshalerStringer struct{}

func (jwMarshalerStringer) String() string               { return "s" }
func (jwMarshalerStringer) MarshalJSON() ([]byte, error) { return []byte(`{"stringer":true}`), nil }

func TestWriteJSONIndentTable(t *testing.T) {
	before := jwCompared
	for _, c := range jwTable() {
		jwSame(t, c.name, c.v)
		// the same value nested in a slice, a map and a struct, so that
		// it is written at depth and addressable
		jwSame(t, c.name+" (nested)", []any{map[string]any{"v": []any{c.v}}})
		jwSame(t, c.name+" (in a slice of any)", []any{c.v, c.v})
		jwSame(t, c.name+" (in a struct)", &struct {
			A []any `json:"a"`
		}{[]any{c.v}})
	}
	t.Logf("%d values compared", jwCompared-before)
}

// --- Result-shaped values

type jwLDALatent struct {
	Beta  *Factor `json:"beta"`
	Theta *Factor `json:"theta"`
	Z     *Factor `json:"z"`
}

type jwCTMLatent struct {
	Theta []*Gaussian `json:"theta"`
	Z     *Factor     `json:"z"`
}

type jwCTMParams struct {
	Beta   [][]float64 `json:"beta"`
	Mu0    []float64   `json:"mu0"`
	Sigma0 [][]float64 `json:"Sigma0"`
}

type jwPumpsLatent struct {
	Alpha *Normal `json:"alpha"`
	Beta  *Factor `json:"beta"`
	Theta *Factor `json:"theta"`
}

type jwSchoolLatent struct {
	Mu    *Normal   `json:"mu"`
	Tau   *Normal   `json:"tau"`
	A     *Gaussian `json:"a"`
	Sigma *Normal   `json:"sigma"`
}

type jwNoParams struct{}

// jwVec returns n values of every magnitude a fit produces: probabilities,
// digammas, tiny underflowing weights, large counts, and exact integers.
func jwVec(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		switch r.IntN(6) {
		case 0:
			x[i] = r.Float64()
		case 1:
			x[i] = math.Exp(-r.Float64() * 700)
		case 2:
			x[i] = r.NormFloat64() * 1e4
		case 3:
			x[i] = float64(r.IntN(100))
		case 4:
			x[i] = math.Exp(r.NormFloat64() * 30)
		default:
			x[i] = -r.ExpFloat64()
		}
	}
	return x
}

func jwCov(r *rand.Rand, k int) []float64 {
	a := jwVec(r, k*k)
	c := make([]float64, k*k)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			for l := 0; l < k; l++ {
				c[i*k+j] += a[i*k+l] * a[j*k+l] / 1e4
			}
		}
		c[i*k+i]++
	}
	return c
}

func jwFingerprint(r *rand.Rand) *Fingerprint {
	fp := &Fingerprint{Data: map[string]string{"w": HashValues(jwVec(r, 10)), "K": HashValues(3), "<D>": HashValues(2.5)},
		Options: map[string]string{"method": "laplace", "smoothing": FormatOption(0.01), "shrinkage": FormatOption(1e-300)}}
	return fp.WithParams(jwNoParams{})
}

func jwRun(r *rand.Rand, iters int) (elbo []float64, secs float64) {
	elbo = make([]float64, iters)
	v := -1e6 * r.Float64()
	for i := range elbo {
		v += math.Abs(v) * math.Exp(-float64(i)) / 10
		elbo[i] = v
	}
	return elbo, r.Float64() * 100
}

func TestWriteJSONIndentResults(t *testing.T) {
	before := jwCompared
	for seed := uint64(0); seed < 12; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		d, k, v, tokens := 3+r.IntN(20), 2+r.IntN(5), 5+r.IntN(30), 50+r.IntN(200)
		elbo, secs := jwRun(r, r.IntN(40))
		lda := &Result[jwLDALatent, jwNoParams]{Model: "lda", Method: "cavi", Converged: seed%2 == 0, Status: "converged",
			Iterations: len(elbo), ELBO: elbo, Seconds: secs,
			Latent: jwLDALatent{
				Beta:  NewFactor("Dirichlet", []int{k, v}, "alpha", jwVec(r, k*v)),
				Theta: NewFactor("Dirichlet", []int{d, k}, "alpha", jwVec(r, d*k)),
				Z:     NewFactor("Categorical", []int{tokens, k}, "p", jwVec(r, tokens*k)),
			},
			Fingerprint: jwFingerprint(r)}
		if seed%3 == 1 {
			lda.Status, lda.Converged = "max_iterations: theta: indefinite (3 units)", false
			lda.Unsettled = []int{1, 5, 9}
			lda.Tempering, lda.Temperature, lda.TemperedELBO = "anneal linear:10:100", jwVec(r, len(elbo)), jwVec(r, len(elbo))
			lda.UnitTemperature = jwVec(r, d)
			lda.Warning = `components 1 and 2 merged: "identical" <copies> & more`
			lda.ELBONote = "flat prior \u2028 improper"
		}
		if seed%4 == 3 {
			lda.Latent.Z = nil
			lda.ELBO = nil
			lda.Fingerprint = nil
			lda.Unsettled = []int{}
		}
		jwSame(t, fmt.Sprintf("lda seed %d", seed), lda)
		jwSame(t, fmt.Sprintf("lda seed %d, by value", seed), *lda)

		theta := make([]*Gaussian, d)
		for i := range theta {
			theta[i] = NewGaussian("Normal", jwVec(r, k-1), jwCov(r, k-1))
		}
		beta := make([][]float64, k)
		for i := range beta {
			beta[i] = jwVec(r, v)
		}
		ctm := &Result[jwCTMLatent, jwCTMParams]{Model: "ctm", Method: "laplace", Status: "canceled", Iterations: len(elbo),
			ELBO: elbo, Seconds: secs, Latent: jwCTMLatent{Theta: theta, Z: NewFactor("Categorical", []int{tokens, k}, "p", jwVec(r, tokens*k))},
			Params:      jwCTMParams{Beta: beta, Mu0: jwVec(r, k-1), Sigma0: [][]float64{jwVec(r, k-1), {}}},
			Fingerprint: jwFingerprint(r)}
		jwSame(t, fmt.Sprintf("ctm seed %d", seed), ctm)

		pumps := &Result[jwPumpsLatent, jwNoParams]{Model: "pumps", Method: "laplace", Converged: true, Status: "converged",
			ELBO: elbo, Latent: jwPumpsLatent{
				Alpha: NewNormal([]float64{r.NormFloat64()}, []float64{r.Float64()}).Constrain(Transform{Kind: "lower", Lo: 0}),
				Beta:  NewFactor("Gamma", []int{1}, "shape", jwVec(r, 1), "rate", jwVec(r, 1)),
				Theta: NewFactor("Gamma", []int{10}, "shape", jwVec(r, 10), "rate", jwVec(r, 10)),
			}}
		jwSame(t, fmt.Sprintf("pumps seed %d", seed), pumps)

		kinds := []Transform{{Kind: "lower", Lo: -1}, {Kind: "upper", Hi: 2}, {Kind: "lower-upper", Lo: 0, Hi: 1}, {Kind: "ordered"}, {Kind: "positive_ordered"}}
		a := NewGaussian("Normal", jwVec(r, 3), jwCov(r, 3))
		for i := range a.Mean {
			a.Mean[i] = r.NormFloat64()
			a.Cov[i][i] = 0.1 + r.Float64()
		}
		school := &Result[jwSchoolLatent, jwNoParams]{Model: "schoolreg", Method: "delta", Status: "not_finite: a", ELBO: elbo,
			Latent: jwSchoolLatent{
				Mu:    NewNormal([]float64{r.NormFloat64()}, []float64{r.Float64()}),
				Tau:   NewNormal([]float64{r.NormFloat64()}, []float64{r.Float64()}).Constrain(kinds[seed%3]),
				A:     a.Constrain(kinds[seed%5]),
				Sigma: nil,
			}}
		jwSame(t, fmt.Sprintf("schoolreg seed %d", seed), school)
		jwSame(t, fmt.Sprintf("held-out score seed %d", seed), HeldoutScore{PerWord: -r.ExpFloat64() * 8, Tokens: r.IntN(1e6),
			Unseen: r.IntN(10), Unsettled: int(seed % 2), Predictive: "E[θ]·E[β] <plug-in> & exact"})
		jwSame(t, fmt.Sprintf("run seed %d", seed), Run{Converged: true, Status: "converged", Iterations: 3, ELBO: elbo, Seconds: secs, Unsettled: []int{2}})
	}
	t.Logf("%d Result-shaped values compared", jwCompared-before)
}

// --- random values

// jwRandValue draws a nested value of maps, slices and scalars, with floats
// from every exponent (random bit patterns) and strings of random bytes.
func jwRandValue(r *rand.Rand, depth int) any {
	k := r.IntN(14)
	if depth <= 0 && k < 4 {
		k += 4
	}
	switch k {
	case 0, 1:
		m := map[string]any{}
		for n := r.IntN(6); n > 0; n-- {
			m[jwRandString(r)] = jwRandValue(r, depth-1)
		}
		if r.IntN(8) == 0 {
			return map[string]any(nil)
		}
		return m
	case 2, 3:
		s := make([]any, r.IntN(6))
		for i := range s {
			s[i] = jwRandValue(r, depth-1)
		}
		if r.IntN(8) == 0 {
			return []any(nil)
		}
		return s
	case 4, 5:
		return jwRandFloat(r)
	case 6:
		x := make([]float64, r.IntN(8))
		for i := range x {
			x[i] = jwRandFloat(r)
		}
		return x
	case 7:
		f := math.Float32frombits(r.Uint32())
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			f = float32(r.NormFloat64())
		}
		return f
	case 8, 9:
		return jwRandString(r)
	case 10:
		return r.IntN(3) == 0
	case 11:
		return nil
	case 12:
		return r.Int64() >> r.IntN(64)
	default:
		m := map[string][]float64{}
		for n := r.IntN(3); n > 0; n-- {
			m[jwRandString(r)] = []float64{jwRandFloat(r), jwRandFloat(r)}
		}
		return &Factor{Family: jwRandString(r), Shape: []int{r.IntN(5)}, Params: m}
	}
}

func jwRandFloat(r *rand.Rand) float64 {
	switch r.IntN(4) {
	case 0:
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0
		}
		return f
	case 1:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25))
	case 2:
		return float64(r.IntN(2000) - 1000)
	default:
		// near the 'f'/'e' cut-offs
		c := []float64{1e21, 1e-6}[r.IntN(2)]
		return math.Nextafter(c, c*float64(r.IntN(3)))
	}
}

func jwRandString(r *rand.Rand) string {
	alphabet := []string{"a", "Z", "0", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "日",
		"\u2028", "\u2029", "\U0001F600", "\xff", "\xc3", "\xed\xa0\x80", "\ufffd"}
	var b strings.Builder
	for n := r.IntN(10); n > 0; n-- {
		if r.IntN(4) == 0 {
			b.WriteByte(byte(r.Uint32()))
		} else {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
	}
	return b.String()
}

func TestWriteJSONIndentRandom(t *testing.T) {
	before := jwCompared
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		jwSame(t, fmt.Sprintf("random value %d", i), jwRandValue(r, 1+r.IntN(6)))
	}
	t.Logf("%d random values compared", jwCompared-before)
}

func FuzzWriteJSONIndent(f *testing.F) {
	f.Add(uint64(0), "<a&b>\u2028", 1e21)
	f.Add(uint64(1), "\xff\x00", 5e-324)
	f.Add(uint64(2), "", math.Copysign(0, -1))
	f.Fuzz(func(t *testing.T, seed uint64, s string, x float64) {
		r := rand.New(rand.NewPCG(seed, 3))
		v := map[string]any{s: x, "s": []any{s, x, jwRandValue(r, 3)}, "f": NewFactor(s, []int{1}, s, []float64{x})}
		jwSame(t, "fuzz", v)
	})
}

// --- streaming

// A Factor of 10^7 values (about 200 MB of JSON) is written with a
// constant amount of memory: the buffer and a few small allocations.
func TestWriteJSONIndentMemory(t *testing.T) {
	golden.SlowTier(t)
	n := 10_000_000
	if testing.Short() {
		n = 1_000_000
	}
	r := rand.New(rand.NewPCG(5, 5))
	x := make([]float64, n)
	for i := range x {
		x[i] = r.Float64()
	}
	fac := &Factor{Family: "Categorical", Shape: []int{n / 10, 10}, Params: map[string][]float64{"p": x, "log_p": x[:n/2]}}
	res := &Result[jwLDALatent, jwNoParams]{Model: "lda", Latent: jwLDALatent{Z: fac}}
	var cw jwCountWriter
	if err := WriteJSONIndent(&cw, res); err != nil { // warm the caches
		t.Fatal(err)
	}
	var m0, m1 goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&m0)
	if err := WriteJSONIndent(io.Discard, res); err != nil {
		t.Fatal(err)
	}
	goruntime.ReadMemStats(&m1)
	allocs, bytes := m1.Mallocs-m0.Mallocs, m1.TotalAlloc-m0.TotalAlloc
	t.Logf("%d values, %d bytes of JSON: %d allocations, %d bytes allocated", n+n/2, cw.n, allocs, bytes)
	if allocs > 100 || bytes > 256<<10 {
		t.Errorf("writing %d bytes of JSON made %d allocations of %d bytes; want a few, of the buffer's size", cw.n, allocs, bytes)
	}
	if cw.max > 64<<10 {
		t.Errorf("a write of %d bytes: want writes of at most the buffer's 64 KiB", cw.max)
	}
	if a := testing.AllocsPerRun(1, func() { WriteJSONIndent(io.Discard, fac) }); a > 20 {
		t.Errorf("WriteJSONIndent of a Factor of %d values: %v allocations", n+n/2, a)
	}
}

type jwCountWriter struct{ n, max, calls int }

func (w *jwCountWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	w.max = max(w.max, len(p))
	w.calls++
	return len(p), nil
}

// A failing writer stops the encoding at its first error.
type jwFailWriter struct {
	jwCountWriter
	after int
}

var errJWFull = errors.New("disk full")

func (w *jwFailWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.after {
		w.calls++
		return 0, errJWFull
	}
	return w.jwCountWriter.Write(p)
}

func TestWriteJSONIndentWriteError(t *testing.T) {
	x := make([]float64, 1_000_000)
	for i := range x {
		x[i] = float64(i) / 7
	}
	for _, after := range []int{0, 100 << 10} {
		w := &jwFailWriter{after: after}
		err := WriteJSONIndent(w, map[string]any{"x": x, "y": []any{x}})
		if !errors.Is(err, errJWFull) {
			t.Errorf("after %d bytes: error %v, want %v", after, err, errJWFull)
		}
		if w.calls > 3 {
			t.Errorf("after %d bytes: %d writes; want the encoding to stop at the first failure", after, w.calls)
		}
	}
	// a short write without an error is io.ErrShortWrite, as bufio reports
	err := WriteJSONIndent(jwShortWriter{}, []float64{1, 2})
	if !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("short write: %v", err)
	}
}

type jwShortWriter struct{}

func (jwShortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }
