package runtime

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// This file is the data glue of generated packages, driven by a table:
// a generated package describes its sizes, data, consts and params as a
// DataTable (one DataVar a line, pointing at the fields of its Data and
// Model) and its LoadData and NewModel call the methods here, instead of
// spelling out the decoding, size binding, allocation check, missing check
// and flattening of every variable. The code a model compiles to then grows
// by one table line per variable, not by twenty.

// VarKind is what a DataVar holds.
type VarKind uint8

// The kinds of DataVar.
const (
	KindReal  VarKind = iota // real numbers
	KindInt                  // integers, in DataVar.Range if given
	KindCount                // counts: integers ≥ 0 (a Multinomial, Binomial or Poisson draw)
	KindSize                 // a size (a non-negative int)
)

// VarRole is the declaration of a DataVar that is not a size.
type VarRole uint8

// The roles of DataVar.
const (
	RoleData  VarRole = iota // data: required (unless a real scalar)
	RoleConst                // const: required unless it has a default
	RoleParam                // param: optional; Fit starts it when missing
)

// word is how messages name a role: data "x", const "alpha".
func (r VarRole) word() string {
	return [...]string{"data", "const", "param"}[r]
}

// VarClass is the shape class of a DataVar's array.
type VarClass uint8

// The classes of DataVar.
const (
	ClassPlain   VarClass = iota
	ClassSimplex          // each row (last dimension) is a point of the simplex
	ClassCov              // a covariance: symmetric positive definite
	ClassBag              // documents as [term, count] pairs: Dims is [D]
	ClassRagged           // one value per entry of each document of the bag Dims[1]
)

// Bound is an end of an int's declared range: the size Size if named,
// else Value.
type Bound struct {
	Value int
	Size  string
}

// DataVar describes one size, data, const or param of a model: how
// LoadData decodes it into its Data field and NewModel checks it and loads
// it into its Model field.
type DataVar struct {
	Name  string // as in the model (the key of the data file)
	Kind  VarKind
	Role  VarRole  // unless a size
	Class VarClass // of an array
	// Dims are the sizes of the array, outermost first; none for a scalar.
	Dims []string
	// Range is an int's declared range lo..hi, if any.
	Range []Bound
	// Pos is the declaration's position, named when a const without a
	// default is missing.
	Pos string
	// Data points at the Data field: *int for a size; *float64 for real
	// data and **float64 for a real const or param; *[]T, *[][]T or
	// *[][][]T (T float64 or int) for an array; *[][][2]int for a bag.
	Data any
	// Model points at the Model field: *int, *float64, or *[]T for an
	// array (flattened row-major). A bag's fields are Off, Term and Count.
	Model any
	// Off is a bag's document offsets in the Model (set by Load), or for
	// ragged data the offsets of its bag (read by Load).
	Off, Term *[]int
	Count     *[]float64
	// Default fills the Model field with the declared default when the
	// data do not give the variable. Without one a const is required and
	// a param is left to Fit (nil, or 0 for a scalar).
	Default func()
	// SizeDefault is a size's declared default (`size K = 2`), which
	// BindSizes takes when neither the data give the size nor the length
	// of an array determines it (before the ranges of int data do); 0 if
	// it has none. For a Fixed size it is the size's value.
	SizeDefault int
	// Fixed marks the size of a literal dimension, the 2 of real[2]: it is
	// always SizeDefault, has no Data field (Data is nil) and no key in
	// the data file, and an array of another length is an error.
	Fixed bool
}

// DataTable is a model's sizes and variables, in the order of the model,
// with the Data and Model they load from and into. Load copies every array:
// a Model's values derived from its data (transposes, logarithms, the
// fingerprint) are computed once, so a Model must not see a caller's later
// changes to the Data.
type DataTable struct {
	Vars []DataVar
	// Given points at the set of sizes LoadData read (Data.given), so
	// that a size given as 0 is not taken for one left out; nil if the
	// model has no sizes.
	Given *map[string]bool
	// Omit names observed data variables that may be left out: a
	// generated package's Predict, predicting them, loads them as zeros of
	// their shape when the data do not give them.
	Omit  map[string]bool
	sizes *Sizes
}

// Decode reads the data file r (a JSON object keyed by the names in the
// table) into the Data fields: the sizes first, then the other variables,
// each with the decoder of its type. It reads r as a stream (see
// jsonscan_decode.go), decoding each value into its Go form as it is read
// rather than holding the document in memory, and reports what
// SplitObject (at most DataLimit bytes; syntax errors, duplicate keys and
// anything after the object refused; unknown keys noted) and then the
// Decode* function of each variable (DecodeSize, DecodeRealRows, DecodeBag,
// ...) report for the same document.
//
// The arrays are decoded into one flat array each, a matrix's rows slicing
// it.
func (t *DataTable) Decode(r io.Reader) error {
	return newTableDecoder(t, r).decode()
}

// BindSizes binds every size: first the fixed sizes of literal
// dimensions and those the data give (by their own entry, or as a nonzero
// Data field), then the lengths of the arrays, in the order of the table,
// then the declared defaults of the sizes still unbound, then the largest
// values of int data whose range ends at a size (bindRanges), and stores
// them in the sizes' Model fields. A size none of these determines is an
// error. It returns the sizes for further checks (Sizes.AtLeast).
func (t *DataTable) BindSizes() (*Sizes, error) {
	sz := NewSizes()
	t.sizes = sz
	var given map[string]bool
	if t.Given != nil {
		given = *t.Given
	}
	for _, v := range t.Vars {
		if v.Kind != KindSize {
			continue
		}
		if v.Fixed {
			if err := sz.BindFixed(v.Name, v.SizeDefault); err != nil {
				return nil, err
			}
			continue
		}
		if n := *v.Data.(*int); n != 0 || given[v.Name] {
			if err := sz.BindGiven(v.Name, n); err != nil {
				return nil, err
			}
		}
	}
	for _, v := range t.Vars {
		if err := v.bind(sz); err != nil {
			return nil, err
		}
	}
	for _, v := range t.Vars {
		if v.Kind != KindSize || v.SizeDefault == 0 {
			continue
		}
		if _, ok := sz.Get(v.Name); !ok {
			if err := sz.Bind(v.Name, v.SizeDefault, "the default of "+strconv.Quote(v.Name)+", %d,"); err != nil {
				return nil, err
			}
		}
	}
	if err := t.bindRanges(sz); err != nil {
		return nil, err
	}
	for _, v := range t.Vars {
		if v.Kind != KindSize {
			continue
		}
		n, ok := sz.Get(v.Name)
		if !ok {
			return nil, fmt.Errorf("size %q: cannot be inferred from the data; give it as %q%s", v.Name, v.Name, t.wouldGive(v.Name))
		}
		*v.Model.(*int) = n
	}
	return sz, nil
}

// bindRanges binds each size still unbound that is the upper end of the
// declared range of int data the data give (`group : int[N] in 1..J`, or
// the term ids of a bag `of 1..V`) to the largest value of that data (of
// all such data together): J = max(group). A size given explicitly or by
// an array's shape wins, and the values are range-checked against it by
// Load. A size whose data are all empty stays unbound.
func (t *DataTable) bindRanges(sz *Sizes) error {
	type found struct {
		max   int
		names []string
	}
	var order []string
	maxima := map[string]*found{}
	for _, v := range t.Vars {
		if v.Kind == KindSize || len(v.Range) != 2 || v.Range[1].Size == "" || v.Class == ClassRagged {
			continue
		}
		size := v.Range[1].Size
		if _, ok := sz.Get(size); ok {
			continue
		}
		m, ok := maxInt(reflect.ValueOf(v.Data).Elem(), v.Class == ClassBag)
		if !ok {
			continue
		}
		f := maxima[size]
		if f == nil {
			f = &found{max: m}
			maxima[size] = f
			order = append(order, size)
		}
		f.max = max(f.max, m)
		f.names = append(f.names, strconv.Quote(v.Name))
	}
	for _, size := range order {
		f := maxima[size]
		what := "the largest value of " + strings.Join(f.names, " and ") + ", %d,"
		if err := sz.Bind(size, f.max, what); err != nil {
			return err
		}
	}
	return nil
}

// maxInt returns the largest int in a (an int or a nested slice of them;
// of a bag's [term, count] pairs, the largest term), and false if there is
// none.
func maxInt(a reflect.Value, bag bool) (int, bool) {
	switch a.Kind() {
	case reflect.Int:
		return int(a.Int()), true
	case reflect.Array: // a bag's [term, count]
		if bag && a.Len() == 2 {
			return int(a.Index(0).Int()), true
		}
		return 0, false
	case reflect.Slice:
		best, found := 0, false
		for i := range a.Len() {
			if m, ok := maxInt(a.Index(i), bag); ok && (!found || m > best) {
				best, found = m, true
			}
		}
		return best, found
	}
	return 0, false
}

// wouldGive lists, for the message of a size that is not determined, the
// variables of the table that the data could give instead to determine
// it: an array with a dimension of that size, or int data ranging up to
// it.
func (t *DataTable) wouldGive(size string) string {
	var alts []string
	for _, v := range t.Vars {
		if v.Kind == KindSize {
			continue
		}
		what := v.Role.word() + " " + strconv.Quote(v.Name)
		dims := v.Dims
		if v.Class == ClassBag || v.Class == ClassRagged {
			dims = dims[:1]
		}
		switch {
		case slices.Contains(dims, size):
			alts = append(alts, what+" (one of its dimensions is "+size+")")
		case len(v.Range) == 2 && v.Range[1].Size == size && v.Class != ClassRagged:
			alts = append(alts, what+" (its values range up to "+size+", which is then their largest)")
		}
	}
	if len(alts) == 0 {
		return ""
	}
	return ", or give " + strings.Join(alts, " or ")
}

// bindWords describe the length of an array's k-th dimension.
var bindWords = [...]string{"%q entries", "%q columns", "%q entries of each row"}

// bind binds the sizes v's array implies: its length, its first
// element's, and so on (only the first dimension of a bag or ragged data).
func (v *DataVar) bind(sz *Sizes) error {
	if v.Kind == KindSize || len(v.Dims) == 0 {
		return nil
	}
	a := reflect.ValueOf(v.Data).Elem()
	if a.IsNil() {
		return nil
	}
	dims := v.Dims
	if v.Class == ClassBag || v.Class == ClassRagged {
		dims = dims[:1]
	}
	for k, d := range dims {
		if k > 0 {
			if a.Len() == 0 {
				return nil
			}
			a = a.Index(0)
		}
		if err := sz.Bind(d, a.Len(), fmt.Sprintf(bindWords[k], v.Name)); err != nil {
			return err
		}
	}
	return nil
}

// CheckAllocs refuses sizes for which the fit would allocate more than
// MemoryLimit (Sizes.CheckAllocs): the arrays of the table's variables
// (three copies of a param's), then extra, the arrays of the fit. It
// needs BindSizes first.
func (t *DataTable) CheckAllocs(extra []Alloc) error {
	var as []Alloc
	for _, v := range t.Vars {
		if v.Kind == KindSize || len(v.Dims) == 0 {
			continue
		}
		what := v.Role.word() + " " + strconv.Quote(v.Name)
		switch v.Class {
		case ClassBag:
			t.sizes.SetEntries(v.Name, BagEntries(*v.Data.(*[][][2]int)))
			as = append(as, Alloc{What: what, Dims: []string{"@" + v.Name}, Copies: 2}, Alloc{What: what + " (offsets)", Dims: v.Dims[:1], Copies: 1})
			continue
		case ClassRagged:
			as = append(as, Alloc{What: what, Dims: []string{"@" + v.Dims[1]}, Copies: 1})
			continue
		}
		copies := 1
		if v.Role == RoleParam {
			copies = 3 // the Model's, the M-step's and the Result's
		}
		as = append(as, Alloc{What: what, Dims: v.Dims, Copies: copies})
	}
	return t.sizes.CheckAllocs(append(as, extra...))
}

// Load checks the variables and loads them into the Model, in the order
// of the table: a missing data or const (without a default) is an error,
// a missing const or param with a default takes it, arrays are checked
// (lengths, int ranges, finite reals, simplex rows, positive definite
// covariances) and flattened. It needs BindSizes first; errors name the
// variable and the 1-based index of a bad entry.
func (t *DataTable) Load() error {
	for k := range t.Vars {
		v := &t.Vars[k]
		if v.Role == RoleData && t.Omit[v.Name] && v.Kind != KindSize && len(v.Dims) > 0 && reflect.ValueOf(v.Data).Elem().IsNil() {
			v.zeros(t.sizes)
			continue
		}
		if err := v.load(t.sizes); err != nil {
			return err
		}
	}
	return nil
}

// zeros sets v's Model field to zeros of its shape (a plain array).
func (v *DataVar) zeros(sz *Sizes) {
	n := 1
	for _, d := range v.Dims {
		k, _ := sz.Get(d)
		n *= k
	}
	switch p := v.Model.(type) {
	case *[]float64:
		*p = make([]float64, n)
	case *[]int:
		*p = make([]int, n)
	default:
		panic(fmt.Sprintf("runtime: DataVar %q: cannot omit %T", v.Name, v.Model))
	}
}

// load checks v and loads it into its Model field.
func (v *DataVar) load(sz *Sizes) error {
	if v.Kind == KindSize {
		return nil
	}
	if p, ok := v.Data.(*float64); ok { // real data: 0 if not given
		if err := CheckReal(v.Name, *p); err != nil {
			return err
		}
		*v.Model.(*float64) = *p
		return nil
	}
	if reflect.ValueOf(v.Data).Elem().IsNil() {
		switch {
		case v.Role == RoleData:
			return fmt.Errorf("data %q is missing", v.Name)
		case v.Role == RoleConst && v.Default == nil:
			return fmt.Errorf("const %q is missing: %s declares it without a default, so the data must give it", v.Name, v.Pos)
		case v.Default != nil:
			v.Default()
		}
		return nil
	}
	size := func(d string) int {
		n, _ := sz.Get(d)
		return n
	}
	lo, hi := math.MinInt, math.MaxInt
	switch {
	case v.Kind == KindReal:
		lo, hi = 0, 0 // not read for reals
	case len(v.Range) == 2:
		bound := func(b Bound) int {
			if b.Size != "" {
				return size(b.Size)
			}
			return b.Value
		}
		lo, hi = bound(v.Range[0]), bound(v.Range[1])
	case v.Kind == KindCount:
		lo = 0
	}
	if v.Class == ClassBag {
		off, term, count, err := FlattenBag(v.Name, *v.Data.(*[][][2]int), size(v.Dims[0]), lo, hi)
		if err != nil {
			return err
		}
		*v.Off, *v.Term, *v.Count = off, term, count
		return nil
	}
	var err error
	switch p := v.Data.(type) {
	case **float64:
		if err := CheckReal(v.Name, **p); err != nil {
			return err
		}
		*v.Model.(*float64) = **p
		return nil
	case *[][]float64:
		if v.Class == ClassRagged {
			*v.Model.(*[]float64), err = FlatRagged(v.Name, *p, *v.Off, lo, hi)
			return err
		}
	case *[][]int:
		if v.Class == ClassRagged {
			*v.Model.(*[]int), err = FlatRagged(v.Name, *p, *v.Off, lo, hi)
			return err
		}
	}
	n := make([]int, len(v.Dims))
	for k, d := range v.Dims {
		n[k] = size(d)
	}
	switch p := v.Data.(type) {
	case *[]float64:
		*v.Model.(*[]float64), err = Flat1(v.Name, *p, n[0], lo, hi)
	case *[]int:
		*v.Model.(*[]int), err = Flat1(v.Name, *p, n[0], lo, hi)
	case *[][]float64:
		*v.Model.(*[]float64), err = Flat2(v.Name, *p, n[0], n[1], lo, hi)
	case *[][]int:
		*v.Model.(*[]int), err = Flat2(v.Name, *p, n[0], n[1], lo, hi)
	case *[][][]float64:
		*v.Model.(*[]float64), err = Flat3(v.Name, *p, n[0], n[1], n[2], lo, hi)
	case *[][][]int:
		*v.Model.(*[]int), err = Flat3(v.Name, *p, n[0], n[1], n[2], lo, hi)
	default:
		panic(fmt.Sprintf("runtime: DataVar %q: cannot load %T into %T", v.Name, v.Data, v.Model))
	}
	if err != nil {
		return err
	}
	last := n[len(n)-1]
	switch v.Class {
	case ClassCov:
		return CheckSPD(v.Name, *v.Model.(*[]float64), last)
	case ClassSimplex:
		rows := 1
		for _, r := range n[:len(n)-1] {
			rows *= r
		}
		return CheckSimplexRows(v.Name, *v.Model.(*[]float64), rows, last)
	}
	return nil
}

// DomainCheck is one check of CheckDomains: the arguments of CheckDomain,
// with Values a []float64 or []int.
type DomainCheck struct {
	Role, Name string
	Values     any
	Shape      []int
	Domain     Domain
	What       string
	// Absent skips the check: a param the data do not give, which Fit
	// starts in its domain.
	Absent bool
}

// CheckDomains runs the checks cs in order (CheckDomain) and returns the
// first error.
func CheckDomains(cs []DomainCheck) error {
	for _, c := range cs {
		if c.Absent {
			continue
		}
		var err error
		switch v := c.Values.(type) {
		case []float64:
			err = CheckDomain(c.Role, c.Name, v, c.Shape, c.Domain, c.What)
		case []int:
			err = CheckDomain(c.Role, c.Name, v, c.Shape, c.Domain, c.What)
		default:
			panic(fmt.Sprintf("runtime: DomainCheck %q: cannot check %T", c.Name, c.Values))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
