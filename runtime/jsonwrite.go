package runtime

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// WriteJSONIndent writes v to w as JSON, exactly the bytes
// json.MarshalIndent(v, "", " ") returns (and nothing after them: no
// newline), but as a stream: it walks v by reflection and writes through a
// buffer of fixed size, so its memory does not grow with the output (a
// Result holding every token's posterior is a gigabyte of JSON), where
// MarshalIndent holds the compact and the indented encoding whole.
//
// It follows encoding/json's rules: struct fields by their json tags
// (names, "-", omitempty, omitzero, string) with embedded structs promoted
// as encoding/json promotes them, maps sorted by key, nil slices, maps and
// pointers as null, []byte as base64, json.Number, encoding/json's float
// formatting and string escaping (HTML-safe, invalid UTF-8 as \ufffd), and
// json.Marshaler and encoding.TextMarshaler implementations (whose output,
// a []byte by their signature, is the one thing held whole: compacted and
// indented at its depth as MarshalIndent would). It returns the errors
// json.Marshal returns (a NaN or infinite float is a
// *json.UnsupportedValueError, a method's failure a *json.MarshalerError,
// a channel or function a *json.UnsupportedTypeError, a cycle an
// UnsupportedValueError), or the first error of w; in either case part of
// the output may have been written already, so a file being written should
// be discarded (AtomicFile.Abort).
func WriteJSONIndent(w io.Writer, v any) (err error) {
	ew := &jwErrWriter{w: w}
	e := &jwEncoder{ew: ew, w: bufio.NewWriterSize(ew, 64<<10)}
	defer func() {
		if r := recover(); r != nil {
			je, ok := r.(jwError)
			if !ok {
				panic(r)
			}
			err = je.error
		}
	}()
	e.value(reflect.ValueOf(v), jwOpts{escapeHTML: true})
	if err := e.w.Flush(); err != nil {
		return err
	}
	return nil
}

// jwErrWriter records the first error of the writer under the buffer, which
// the encoder checks as it goes (a full disk stops a long write early).
type jwErrWriter struct {
	w   io.Writer
	err error
}

func (ew *jwErrWriter) Write(p []byte) (int, error) {
	if ew.err != nil {
		return 0, ew.err
	}
	n, err := ew.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		ew.err = err
	}
	return n, err
}

// jwError carries an encoding error up the recursion (as in encoding/json).
type jwError struct{ error }

type jwEncoder struct {
	ew      *jwErrWriter
	w       *bufio.Writer
	depth   int // containers open around the value being written
	scratch [64]byte
	// cycle detection, as encoding/json's
	ptrLevel uint
	ptrSeen  map[any]struct{}
}

type jwOpts struct {
	quoted     bool // the string tag option: scalars inside a JSON string
	escapeHTML bool
}

type jwEncFunc func(e *jwEncoder, v reflect.Value, o jwOpts)

func (e *jwEncoder) fail(err error) { panic(jwError{err}) }

// check stops the encoding at the first error of the writer.
func (e *jwEncoder) check() {
	if e.ew.err != nil {
		e.fail(e.ew.err)
	}
}

func (e *jwEncoder) value(v reflect.Value, o jwOpts) {
	if !v.IsValid() {
		e.w.WriteString("null")
		return
	}
	jwTypeEncoder(v.Type())(e, v, o)
}

const jwSpaces = "                                                                "

// newline starts a line indented to the current depth.
func (e *jwEncoder) newline() {
	e.w.WriteByte('\n')
	for n := e.depth; n > 0; {
		k := min(n, len(jwSpaces))
		e.w.WriteString(jwSpaces[:k])
		n -= k
	}
}

// elem writes what goes before an element of an object or array, the
// first or a later one, as MarshalIndent lays it out; closing ends the
// object or array, as {} or [] if it had no elements.
func (e *jwEncoder) elem(first bool) {
	if first {
		e.depth++
	} else {
		e.w.WriteByte(',')
	}
	e.newline()
}

func (e *jwEncoder) closing(c byte, empty bool) {
	if !empty {
		e.depth--
		e.newline()
	}
	e.w.WriteByte(c)
}

// jwStartDetectingCycles is encoding/json's: past this many nested
// pointers, maps and slices, a value met again on the path is a cycle.
const jwStartDetectingCycles = 1000

// seen records key (v's identity) on the path being written, failing as
// encoding/json does if it is there already.
func (e *jwEncoder) seen(v reflect.Value, key any) {
	if e.ptrSeen == nil {
		e.ptrSeen = map[any]struct{}{}
	}
	if _, ok := e.ptrSeen[key]; ok {
		e.fail(&json.UnsupportedValueError{Value: v, Str: fmt.Sprintf("encountered a cycle via %s", v.Type())})
	}
	e.ptrSeen[key] = struct{}{}
}

var jwEncoderCache sync.Map // map[reflect.Type]jwEncFunc

var (
	jwMarshalerType     = reflect.TypeFor[json.Marshaler]()
	jwTextMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	jwNumberType        = reflect.TypeFor[json.Number]()
	jwIsZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
)

func jwTypeEncoder(t reflect.Type) jwEncFunc {
	if f, ok := jwEncoderCache.Load(t); ok {
		return f.(jwEncFunc)
	}
	// a recursive type finds this indirection while its encoder is built
	build := sync.OnceValue(func() jwEncFunc { return jwNewTypeEncoder(t, true) })
	f, loaded := jwEncoderCache.LoadOrStore(t, jwEncFunc(func(e *jwEncoder, v reflect.Value, o jwOpts) {
		build()(e, v, o)
	}))
	if loaded {
		return f.(jwEncFunc)
	}
	enc := build()
	jwEncoderCache.Store(t, enc)
	return enc
}

// jwNewTypeEncoder chooses the encoding of t as encoding/json's
// newTypeEncoder does; allowAddr lets an addressable value use the methods
// of its pointer.
func jwNewTypeEncoder(t reflect.Type, allowAddr bool) jwEncFunc {
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(jwMarshalerType) {
		return jwCondAddr(jwAddrMarshaler, jwNewTypeEncoder(t, false))
	}
	if t.Implements(jwMarshalerType) {
		return jwMarshaler
	}
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(jwTextMarshalerType) {
		return jwCondAddr(jwAddrTextMarshaler, jwNewTypeEncoder(t, false))
	}
	if t.Implements(jwTextMarshalerType) {
		return jwTextMarshaler
	}
	switch t.Kind() {
	case reflect.Bool:
		return jwBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return jwInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return jwUint
	case reflect.Float32:
		return jwFloat32
	case reflect.Float64:
		return jwFloat64
	case reflect.String:
		return jwString
	case reflect.Interface:
		return jwInterface
	case reflect.Struct:
		return jwNewStructEncoder(t)
	case reflect.Map:
		return jwNewMapEncoder(t)
	case reflect.Slice:
		return jwNewSliceEncoder(t)
	case reflect.Array:
		return jwNewArrayEncoder(t)
	case reflect.Pointer:
		return jwNewPtrEncoder(t)
	default:
		return jwUnsupported
	}
}

func jwCondAddr(canAddr, other jwEncFunc) jwEncFunc {
	return func(e *jwEncoder, v reflect.Value, o jwOpts) {
		if v.CanAddr() {
			canAddr(e, v, o)
		} else {
			other(e, v, o)
		}
	}
}

func jwUnsupported(e *jwEncoder, v reflect.Value, _ jwOpts) {
	e.fail(&json.UnsupportedTypeError{Type: v.Type()})
}

// --- methods

func jwMarshaler(e *jwEncoder, v reflect.Value, o jwOpts) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		e.w.WriteString("null")
		return
	}
	m, ok := reflect.TypeAssert[json.Marshaler](v)
	if !ok {
		e.w.WriteString("null")
		return
	}
	e.marshaled(v.Type(), m)
}

func jwAddrMarshaler(e *jwEncoder, v reflect.Value, o jwOpts) {
	va := v.Addr()
	if va.IsNil() {
		e.w.WriteString("null")
		return
	}
	m, _ := reflect.TypeAssert[json.Marshaler](va)
	e.marshaled(v.Type(), m)
}

// marshaled writes the output of m's MarshalJSON as MarshalIndent would:
// compacted, HTML-escaped and indented at the current depth. A failure is
// the *json.MarshalerError json.Marshal returns.
func (e *jwEncoder) marshaled(t reflect.Type, m json.Marshaler) {
	b, err := m.MarshalJSON()
	if err != nil {
		e.fail(jwMarshalerError(t, jwFailingMarshaler{err: err}))
	}
	var compact, escaped, indented bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		// the same bytes make json.Marshal report the same syntax error
		e.fail(jwMarshalerError(t, jwFailingMarshaler{b: b}))
	}
	json.HTMLEscape(&escaped, compact.Bytes())
	if err := json.Indent(&indented, escaped.Bytes(), strings.Repeat(" ", e.depth), " "); err != nil {
		e.fail(jwMarshalerError(t, jwFailingMarshaler{b: b}))
	}
	e.w.Write(indented.Bytes())
}

// jwFailingMarshaler and jwFailingTextMarshaler make json.Marshal produce
// the error it reports for a MarshalJSON or MarshalText that fails with
// err, or a MarshalJSON whose output b is not JSON.
type jwFailingMarshaler struct {
	b   []byte
	err error
}

type jwFailingTextMarshaler struct{ err error }

func (f jwFailingMarshaler) MarshalJSON() ([]byte, error)     { return f.b, f.err }
func (f jwFailingTextMarshaler) MarshalText() ([]byte, error) { return nil, f.err }

// jwMarshalerError returns json.Marshal's error for the failing m, as of
// type t: a *json.MarshalerError, whose unexported part (the method's name)
// only encoding/json can set.
func jwMarshalerError(t reflect.Type, m any) error {
	_, err := json.Marshal(m)
	var me *json.MarshalerError
	if errors.As(err, &me) {
		me.Type = t
		return me
	}
	if err == nil {
		err = fmt.Errorf("json: error calling a marshaling method for type %s", t)
	}
	return err
}

func jwTextMarshaler(e *jwEncoder, v reflect.Value, o jwOpts) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		e.w.WriteString("null")
		return
	}
	m, ok := reflect.TypeAssert[encoding.TextMarshaler](v)
	if !ok {
		e.w.WriteString("null")
		return
	}
	e.text(v.Type(), m, o)
}

func jwAddrTextMarshaler(e *jwEncoder, v reflect.Value, o jwOpts) {
	va := v.Addr()
	if va.IsNil() {
		e.w.WriteString("null")
		return
	}
	m, _ := reflect.TypeAssert[encoding.TextMarshaler](va)
	e.text(v.Type(), m, o)
}

func (e *jwEncoder) text(t reflect.Type, m encoding.TextMarshaler, o jwOpts) {
	b, err := m.MarshalText()
	if err != nil {
		e.fail(jwMarshalerError(t, jwFailingTextMarshaler{err: err}))
	}
	jwWriteString(e.w, string(b), o.escapeHTML)
}

// --- scalars

func (e *jwEncoder) quote(o jwOpts) {
	if o.quoted {
		e.w.WriteByte('"')
	}
}

func jwBool(e *jwEncoder, v reflect.Value, o jwOpts) {
	e.quote(o)
	e.w.Write(strconv.AppendBool(e.scratch[:0], v.Bool()))
	e.quote(o)
}

func jwInt(e *jwEncoder, v reflect.Value, o jwOpts) {
	e.quote(o)
	e.w.Write(strconv.AppendInt(e.scratch[:0], v.Int(), 10))
	e.quote(o)
}

func jwUint(e *jwEncoder, v reflect.Value, o jwOpts) {
	e.quote(o)
	e.w.Write(strconv.AppendUint(e.scratch[:0], v.Uint(), 10))
	e.quote(o)
}

func jwFloat32(e *jwEncoder, v reflect.Value, o jwOpts) { e.float(v, 32, o) }
func jwFloat64(e *jwEncoder, v reflect.Value, o jwOpts) { e.float(v, 64, o) }

// float writes f as encoding/json does: like ES6's number to string, 'f'
// format between 1e-6 and 1e21 and 'e' (exponent unpadded) outside.
func (e *jwEncoder) float(v reflect.Value, bits int, o jwOpts) {
	f := v.Float()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fail(&json.UnsupportedValueError{Value: v, Str: strconv.FormatFloat(f, 'g', -1, bits)})
	}
	e.quote(o)
	e.w.Write(jwAppendFloat(e.scratch[:0], f, bits))
	e.quote(o)
}

func jwAppendFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func jwString(e *jwEncoder, v reflect.Value, o jwOpts) {
	if v.Type() == jwNumberType {
		s := v.String()
		if s == "" {
			s = "0" // json.Number's zero value
		}
		if !jwValidNumber(s) {
			e.fail(fmt.Errorf("json: invalid number literal %q", s))
		}
		e.quote(o)
		e.w.WriteString(s)
		e.quote(o)
		return
	}
	if o.quoted {
		var b bytes.Buffer
		jwWriteString(&b, v.String(), o.escapeHTML)
		jwWriteString(e.w, b.String(), false)
		return
	}
	jwWriteString(e.w, v.String(), o.escapeHTML)
}

// jwValidNumber reports whether s is a JSON number.
func jwValidNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		if s = s[1:]; s == "" {
			return false
		}
	}
	digits := func() {
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		digits()
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		digits()
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			if s = s[1:]; s == "" {
				return false
			}
		}
		digits()
	}
	return s == ""
}

type jwStringWriter interface {
	WriteString(string) (int, error)
	WriteByte(byte) error
}

const jwHex = "0123456789abcdef"

// jwWriteString writes s as a JSON string with encoding/json's escaping:
// \" \\ \b \f \n \r \t, other control bytes as \u00XX, with escapeHTML
// also < > & as \u003c \u003e \u0026; U+2028 and U+2029 always escaped,
// and each byte of invalid UTF-8 as \ufffd.
func jwWriteString(w jwStringWriter, s string, escapeHTML bool) {
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || b != '<' && b != '>' && b != '&') {
				i++
				continue
			}
			w.WriteString(s[start:i])
			switch b {
			case '\\', '"':
				w.WriteByte('\\')
				w.WriteByte(b)
			case '\b':
				w.WriteString(`\b`)
			case '\f':
				w.WriteString(`\f`)
			case '\n':
				w.WriteString(`\n`)
			case '\r':
				w.WriteString(`\r`)
			case '\t':
				w.WriteString(`\t`)
			default:
				w.WriteString(`\u00`)
				w.WriteByte(jwHex[b>>4])
				w.WriteByte(jwHex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			w.WriteString(s[start:i])
			w.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			w.WriteString(s[start:i])
			w.WriteString(`\u202`)
			w.WriteByte(jwHex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}

// --- composites

func jwInterface(e *jwEncoder, v reflect.Value, o jwOpts) {
	if v.IsNil() {
		e.w.WriteString("null")
		return
	}
	e.value(v.Elem(), o)
}

func jwNewPtrEncoder(t reflect.Type) jwEncFunc {
	elem := jwTypeEncoder(t.Elem())
	return func(e *jwEncoder, v reflect.Value, o jwOpts) {
		if v.IsNil() {
			e.w.WriteString("null")
			return
		}
		if e.ptrLevel++; e.ptrLevel > jwStartDetectingCycles {
			key := v.Interface()
			e.seen(v, key)
			defer delete(e.ptrSeen, key)
		}
		elem(e, v.Elem(), o)
		e.ptrLevel--
	}
}

func jwNewArrayEncoder(t reflect.Type) jwEncFunc {
	elem := jwTypeEncoder(t.Elem())
	return func(e *jwEncoder, v reflect.Value, o jwOpts) { e.array(v, elem, o) }
}

func (e *jwEncoder) array(v reflect.Value, elem jwEncFunc, o jwOpts) {
	e.w.WriteByte('[')
	n := v.Len()
	for i := 0; i < n; i++ {
		e.elem(i == 0)
		elem(e, v.Index(i), o)
		e.check()
	}
	e.closing(']', n == 0)
}

func jwNewSliceEncoder(t reflect.Type) jwEncFunc {
	if t.Elem().Kind() == reflect.Uint8 {
		p := reflect.PointerTo(t.Elem())
		if !p.Implements(jwMarshalerType) && !p.Implements(jwTextMarshalerType) {
			return jwByteSlice
		}
	}
	elem := jwTypeEncoder(t.Elem())
	return func(e *jwEncoder, v reflect.Value, o jwOpts) {
		if v.IsNil() {
			e.w.WriteString("null")
			return
		}
		if e.ptrLevel++; e.ptrLevel > jwStartDetectingCycles {
			key := struct {
				ptr any
				len int
			}{v.UnsafePointer(), v.Len()}
			e.seen(v, key)
			defer delete(e.ptrSeen, key)
		}
		e.array(v, elem, o)
		e.ptrLevel--
	}
}

func jwByteSlice(e *jwEncoder, v reflect.Value, _ jwOpts) {
	if v.IsNil() {
		e.w.WriteString("null")
		return
	}
	e.w.WriteByte('"')
	enc := base64.NewEncoder(base64.StdEncoding, e.w)
	enc.Write(v.Bytes())
	enc.Close()
	e.w.WriteByte('"')
}

type jwKeyValue struct {
	key string
	v   reflect.Value
}

func jwNewMapEncoder(t reflect.Type) jwEncFunc {
	switch t.Key().Kind() {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		if !t.Key().Implements(jwTextMarshalerType) {
			return jwUnsupported
		}
	}
	elem := jwTypeEncoder(t.Elem())
	return func(e *jwEncoder, v reflect.Value, o jwOpts) {
		if v.IsNil() {
			e.w.WriteString("null")
			return
		}
		if e.ptrLevel++; e.ptrLevel > jwStartDetectingCycles {
			key := v.UnsafePointer()
			e.seen(v, key)
			defer delete(e.ptrSeen, key)
		}
		kvs := make([]jwKeyValue, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			k, err := jwKeyName(it.Key())
			if err != nil {
				e.fail(fmt.Errorf("json: encoding error for type %q: %q", v.Type().String(), err.Error()))
			}
			kvs = append(kvs, jwKeyValue{k, it.Value()})
		}
		slices.SortFunc(kvs, func(a, b jwKeyValue) int { return strings.Compare(a.key, b.key) })
		e.w.WriteByte('{')
		for i, kv := range kvs {
			e.elem(i == 0)
			jwWriteString(e.w, kv.key, o.escapeHTML)
			e.w.WriteString(": ")
			elem(e, kv.v, o)
			e.check()
		}
		e.closing('}', len(kvs) == 0)
		e.ptrLevel--
	}
}

func jwKeyName(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := reflect.TypeAssert[encoding.TextMarshaler](k); ok {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		b, err := tm.MarshalText()
		return string(b), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	panic("runtime: unexpected map key type " + k.Type().String())
}

// --- structs

// jwField is a struct field as encoding/json sees it.
type jwField struct {
	name      string
	key       string // "name": , escaped as encoding/json escapes names
	tag       bool   // the name is from the json tag
	index     []int
	typ       reflect.Type
	omitEmpty bool
	omitZero  bool
	isZero    func(reflect.Value) bool
	quoted    bool
	enc       jwEncFunc
}

func jwNewStructEncoder(t reflect.Type) jwEncFunc {
	fields := jwTypeFields(t)
	return func(e *jwEncoder, v reflect.Value, o jwOpts) {
		first := true
		e.w.WriteByte('{')
	fieldLoop:
		for i := range fields {
			f := &fields[i]
			fv := v
			for _, j := range f.index {
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue fieldLoop
					}
					fv = fv.Elem()
				}
				fv = fv.Field(j)
			}
			if f.omitEmpty && jwIsEmpty(fv) ||
				f.omitZero && (f.isZero == nil && fv.IsZero() || f.isZero != nil && f.isZero(fv)) {
				continue
			}
			e.elem(first)
			first = false
			e.w.WriteString(f.key)
			f.enc(e, fv, jwOpts{quoted: f.quoted, escapeHTML: o.escapeHTML})
			e.check()
		}
		e.closing('}', first)
	}
}

func jwIsEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// jwValidTag reports whether a json tag's name is usable (letters, digits
// and punctuation other than quotes, backslash and comma).
func jwValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func jwTagHas(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// jwKey is "name": as encoding/json writes a field's name (HTML-escaped,
// nothing else: a valid name needs no other escaping), and the space
// MarshalIndent puts after the colon.
func jwKey(name string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			b.WriteString(`\u00`)
			b.WriteByte(jwHex[c>>4])
			b.WriteByte(jwHex[c&0xF])
		case c == 0xE2 && i+2 < len(name) && name[i+1] == 0x80 && name[i+2]&^1 == 0xA8:
			b.WriteString(`\u202`)
			b.WriteByte(jwHex[name[i+2]&0xF])
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(`": `)
	return b.String()
}

// jwTypeFields lists the fields encoding/json writes for struct type t, in
// order: a breadth-first walk of the embedded structs, keeping for each
// name the field Go's embedding rules select, with json-tagged fields
// dominating untagged ones at the same depth and a tie hiding both.
func jwTypeFields(t reflect.Type) []jwField {
	current := []jwField{}
	next := []jwField{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []jwField
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, f := range current {
			if visited[f.typ] {
				continue
			}
			visited[f.typ] = true
			for i := 0; i < f.typ.NumField(); i++ {
				sf := f.typ.Field(i)
				if sf.Anonymous {
					st := sf.Type
					if st.Kind() == reflect.Pointer {
						st = st.Elem()
					}
					if !sf.IsExported() && st.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !jwValidTag(name) {
					name = ""
				}
				index := append(append(make([]int, 0, len(f.index)+1), f.index...), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				quoted := false
				if jwTagHas(opts, "string") {
					switch ft.Kind() {
					case reflect.Bool,
						reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
						reflect.Float32, reflect.Float64,
						reflect.String:
						quoted = true
					}
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					tagged := name != ""
					if name == "" {
						name = sf.Name
					}
					fld := jwField{name: name, key: jwKey(name), tag: tagged, index: index, typ: ft,
						omitEmpty: jwTagHas(opts, "omitempty"), omitZero: jwTagHas(opts, "omitzero"), quoted: quoted}
					if fld.omitZero {
						fld.isZero = jwIsZeroFunc(sf.Type)
					}
					fields = append(fields, fld)
					if count[f.typ] > 1 {
						// a duplicate, so that the tie below hides both
						fields = append(fields, fields[len(fields)-1])
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, jwField{name: ft.Name(), index: index, typ: ft})
				}
			}
		}
	}
	slices.SortFunc(fields, func(a, b jwField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tag != b.tag {
			if a.tag {
				return -1
			}
			return +1
		}
		return slices.Compare(a.index, b.index)
	})
	out := fields[:0]
	for advance, i := 0, 0; i < len(fields); i += advance {
		fi := fields[i]
		for advance = 1; i+advance < len(fields) && fields[i+advance].name == fi.name; advance++ {
		}
		if advance == 1 {
			out = append(out, fi)
			continue
		}
		// sorted by depth, then tagged first: the first dominates unless
		// the second ties with it
		if fields[i+1].tag == fi.tag && len(fields[i+1].index) == len(fi.index) {
			continue
		}
		out = append(out, fi)
	}
	fields = out
	slices.SortFunc(fields, func(a, b jwField) int { return slices.Compare(a.index, b.index) })
	for i := range fields {
		ft := t
		for _, j := range fields[i].index {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			ft = ft.Field(j).Type
		}
		fields[i].enc = jwTypeEncoder(ft)
	}
	return fields
}

// jwIsZeroFunc is how omitzero tests a field of type t: its IsZero method
// if it has one (guarding nil pointers and interfaces), else nil
// (reflect.Value.IsZero).
func jwIsZeroFunc(t reflect.Type) func(reflect.Value) bool {
	type isZeroer = interface{ IsZero() bool }
	switch {
	case t.Kind() == reflect.Interface && t.Implements(jwIsZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() ||
				(v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) ||
				v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(jwIsZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || v.Interface().(isZeroer).IsZero() }
	case t.Implements(jwIsZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(jwIsZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return nil
}
