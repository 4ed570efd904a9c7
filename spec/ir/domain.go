package ir

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Interval is a domain parsed from a family's SupportText or Constraints:
// Lo < x < Hi (or ≤, where LoOpen or HiOpen is false; an end may be
// infinite). A bound may be a size letter of the family's shape patterns
// plus a constant (Wishart's dof > K − 1): LoLetter or HiLetter, with Lo
// or Hi the constant.
type Interval struct {
	Lo, Hi             float64
	LoOpen, HiOpen     bool
	LoLetter, HiLetter string
	Text               string // as written in the table
}

var (
	numRE    = `(-?[0-9]+(?:\.[0-9]+)?)`
	boundRE  = `([A-Z])(?: ([−+-]) ([0-9]+(?:\.[0-9]+)?))?|` + numRE
	oneSided = regexp.MustCompile(`^(\w+) ([<>]|≤|≥) (?:` + boundRE + `)$`)
	// the upper end may be a size letter plus a constant (OrderedLogistic's
	// 1 ≤ y ≤ C + 1)
	twoSided = regexp.MustCompile(`^` + numRE + ` (<|≤) (\w+) (<|≤) (?:` + boundRE + `)$`)
	// structural clauses are enforced by the declared types (simplex, cov,
	// int ranges) or are the unconstrained reals.
	structural = regexp.MustCompile(`simplex|positive definite|∈`)
)

// ParseDomains parses a comma-separated list of clauses from the table into
// the domain of each name. A clause that is neither an interval nor
// structural is an error.
func ParseDomains(clauses string) (map[string]Interval, error) {
	out := map[string]Interval{}
	for _, c := range splitClauses(clauses) {
		c = strings.TrimSpace(c)
		d := Interval{Lo: math.Inf(-1), Hi: math.Inf(1), LoOpen: true, HiOpen: true, Text: c}
		if m := twoSided.FindStringSubmatch(c); m != nil {
			d.Lo, _ = strconv.ParseFloat(m[1], 64)
			d.Hi, d.HiLetter = letterBound(m[5], m[6], m[7], m[8])
			d.LoOpen, d.HiOpen = m[2] == "<", m[4] == "<"
			out[m[3]] = d
			continue
		}
		if m := oneSided.FindStringSubmatch(c); m != nil {
			name, op := m[1], m[2]
			v, letter := letterBound(m[3], m[4], m[5], m[6])
			switch op {
			case ">", "≥":
				d.Lo, d.LoOpen, d.LoLetter = v, op == ">", letter
			default:
				d.Hi, d.HiOpen, d.HiLetter = v, op == "<", letter
			}
			out[name] = d
			continue
		}
		if structural.MatchString(c) || c == "" {
			continue
		}
		return nil, fmt.Errorf("cannot read the clause %q", c)
	}
	return out, nil
}

// letterBound reads a bound matched by boundRE: a size letter with an
// optional sign and constant, or a number.
func letterBound(letter, sign, add, num string) (float64, string) {
	if letter == "" {
		v, _ := strconv.ParseFloat(num, 64)
		return v, ""
	}
	var v float64
	if add != "" {
		v, _ = strconv.ParseFloat(add, 64)
		if sign != "+" {
			v = -v
		}
	}
	return v, letter
}

// splitClauses splits a list at the commas outside braces ("y ∈ {0, 1}" is
// one clause).
func splitClauses(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{', '(':
			depth++
		case '}', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// Requirement renders d for messages: "> 0", "≥ 0", "in (0, 1)".
func (d Interval) Requirement() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	bound := func(letter string, v float64) string {
		if letter == "" {
			return num(v)
		}
		switch {
		case v < 0:
			return letter + " − " + num(-v)
		case v > 0:
			return letter + " + " + num(v)
		}
		return letter
	}
	loInf, hiInf := math.IsInf(d.Lo, -1) && d.LoLetter == "", math.IsInf(d.Hi, 1) && d.HiLetter == ""
	switch {
	case !loInf && !hiInf:
		l, r := map[bool]string{true: "(", false: "["}[d.LoOpen], map[bool]string{true: ")", false: "]"}[d.HiOpen]
		return "in " + l + bound(d.LoLetter, d.Lo) + ", " + bound(d.HiLetter, d.Hi) + r
	case !loInf:
		return map[bool]string{true: "> ", false: "≥ "}[d.LoOpen] + bound(d.LoLetter, d.Lo)
	case !hiInf:
		return map[bool]string{true: "< ", false: "≤ "}[d.HiOpen] + bound(d.HiLetter, d.Hi)
	}
	return "a real number"
}

// Holds reports whether v lies in d; bounds given by a size letter are
// not known before the data and count as met.
func (d Interval) Holds(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if d.LoLetter == "" && (v < d.Lo || d.LoOpen && v == d.Lo) {
		return false
	}
	if d.HiLetter == "" && (v > d.Hi || d.HiOpen && v == d.Hi) {
		return false
	}
	return true
}
