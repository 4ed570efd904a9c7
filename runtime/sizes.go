package runtime

import (
	"fmt"
	"strconv"
	"strings"
)

// Sizes records the value of each size as data is read, and checks
// consistency. The zero value is ready to use.
type Sizes struct {
	bound map[string]sizeBinding
}

type sizeBinding struct {
	n     int
	what  string
	given bool // by the size's own entry in the data, not inferred
	fixed bool // a literal dimension (BindFixed)
}

// NewSizes returns an empty Sizes.
func NewSizes() *Sizes {
	return &Sizes{bound: map[string]sizeBinding{}}
}

// Bind records that size name has value n according to what, and returns an
// error if an earlier binding of name has a different value (naming both
// sources) or if n < 0.
//
// what describes the source and is rendered with n as follows: if it contains
// "%d", n replaces it; otherwise if it contains a space, "has n" is inserted
// before its last word (`"x" rows` → `"x" has 1500 rows`); otherwise "is n" is
// appended (`"N"` → `"N" is 1500`).
func (s *Sizes) Bind(name string, n int, what string) error {
	if n < 0 {
		return fmt.Errorf("size %q: %s, which is negative", name, describeSize(what, n))
	}
	if s.bound == nil {
		s.bound = map[string]sizeBinding{}
	}
	if b, ok := s.bound[name]; ok {
		if b.n != n && b.fixed {
			return fmt.Errorf("%s, but its type fixes that length at %d", describeSize(what, n), b.n)
		}
		if b.n != n {
			return fmt.Errorf("size %q: %s but %s", name, describeSize(b.what, b.n), describeSize(what, n))
		}
		return nil
	}
	s.bound[name] = sizeBinding{n: n, what: what}
	return nil
}

// BindGiven records that size name was given explicitly as n (a key of
// the data, even if 0), and returns an error if n < 0. Sizes given
// explicitly are bound first, so a later Bind that disagrees names both.
func (s *Sizes) BindGiven(name string, n int) error {
	if err := s.Bind(name, n, strconv.Quote(name)); err != nil {
		return err
	}
	b := s.bound[name]
	b.given = true
	s.bound[name] = b
	return nil
}

// BindFixed records that size name is the literal dimension n of some
// types (the 2 of real[2]): a later Bind of another value is an error
// that names its source and n, as in
//
//	"x" has 3 entries, but its type fixes that length at 2
func (s *Sizes) BindFixed(name string, n int) error {
	if err := s.Bind(name, n, "the literal dimension %d"); err != nil {
		return err
	}
	b := s.bound[name]
	b.fixed = true
	s.bound[name] = b
	return nil
}

// Get returns the value bound to size name, and whether it has been bound.
func (s *Sizes) Get(name string) (int, bool) {
	b, ok := s.bound[name]
	return b.n, ok
}

// describeSize renders a Bind source description with its value (see Bind).
func describeSize(what string, n int) string {
	v := strconv.Itoa(n)
	if strings.Contains(what, "%d") {
		return strings.ReplaceAll(what, "%d", v)
	}
	if i := strings.LastIndexByte(what, ' '); i > 0 {
		return what[:i] + " has " + v + what[i:]
	}
	return what + " is " + v
}

// Equals returns an error unless size name is n plus the sum of the sizes
// plus; what is the vector whose length that is, as in
//
//	size "K" = 4: it is the length of the vector [a, b, 0] (m.vi:9:30), which has 3 elements
func (s *Sizes) Equals(name string, n int, plus []string, what string) error {
	want := n
	for _, p := range plus {
		want += s.bound[p].n
	}
	if got := s.bound[name].n; got != want {
		how := strconv.Itoa(want)
		if len(plus) > 0 {
			how = strings.Join(plus, " + ")
			if n > 0 {
				how += " + " + strconv.Itoa(n)
			}
			how += " = " + strconv.Itoa(want)
		}
		return fmt.Errorf("size %q = %d: it is the length of %s, which has %s elements", name, got, what, how)
	}
	return nil
}

// Exactly returns an error if size name is not n; why says what needs it,
// as in
//
//	size "K" = 4: it is the length of the weights pi of the Mixture at m.vi:9:10, which has 3 components, so it must be 3
func (s *Sizes) Exactly(name string, n int, why string) error {
	if got := s.bound[name].n; got != n {
		return fmt.Errorf("size %q = %d: %s, so it must be %d", name, got, why, n)
	}
	return nil
}

// AtLeast returns an error if size name is below min; why says what the
// size is the length of, as in
//
//	size "K" = 0: it is the length of the simplex beta (lda.vi:13:8), which must be at least 1
func (s *Sizes) AtLeast(name string, min int, why string) error {
	if n := s.bound[name].n; n < min {
		return fmt.Errorf("size %q = %d: %s, which must be at least %d", name, n, why, min)
	}
	return nil
}
