package codegen

import (
	"go/token"
	"regexp"
	"strings"
	"unicode"
)

// predeclared Go identifiers and names generated code uses itself; model
// names that collide get a trailing underscore.
var goReserved = map[string]bool{
	"bool": true, "byte": true, "cap": true, "close": true, "complex": true, "copy": true,
	"error": true, "false": true, "float32": true, "float64": true, "int": true, "len": true,
	"make": true, "max": true, "min": true, "new": true, "nil": true, "panic": true, "print": true,
	"real": true, "string": true, "true": true, "uint": true, "append": true, "clear": true,
	"iota": true, "any": true, "rune": true, "imag": true, "delete": true, "recover": true,
	// imported packages
	"math": true, "runtime": true, "fmt": true, "io": true, "time": true, "context": true,
	"strings": true,
	// methods of the generated Model
	"Fit": true,
}

var tempLike = regexp.MustCompile(`^t[0-9]+$`)

// namer hands out Go identifiers, unique within its scope.
type namer struct{ taken map[string]bool }

func newNamer(extra ...string) *namer {
	n := &namer{taken: map[string]bool{}}
	for k := range goReserved {
		n.taken[k] = true
	}
	for _, e := range extra {
		n.taken[e] = true
	}
	return n
}

// get returns a fresh identifier based on want.
func (n *namer) get(want string) string {
	g := sanitize(want)
	for n.taken[g] || token.IsKeyword(g) || tempLike.MatchString(g) {
		g += "_"
	}
	n.taken[g] = true
	return g
}

func sanitize(s string) string {
	var sb strings.Builder
	upNext := false
	for _, r := range s {
		switch {
		case r == '.' || r == '\'':
			upNext = true
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			if upNext {
				r = unicode.ToUpper(r)
				upNext = false
			}
			sb.WriteRune(r)
		}
	}
	if sb.Len() == 0 {
		return "x"
	}
	return sb.String()
}

// unexported lower-cases the first letter.
func unexported(s string) string {
	s = sanitize(s)
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// exported capitalizes the first letter.
func exported(s string) string {
	s = sanitize(s)
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
