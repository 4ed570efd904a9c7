package spec

import (
	"sort"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c *checker) namesWithRole(r ir.Role) []string {
	var out []string
	for _, s := range c.order {
		if s.v.Role == r {
			out = append(out, s.v.Name)
		}
	}
	return out
}

// closeNames returns the candidates within a small edit distance of name (or
// equal ignoring case), sorted.
func closeNames(name string, candidates []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, cand := range candidates {
		if cand == name || seen[cand] {
			continue
		}
		limit := 1
		if len(name) > 4 {
			limit = 2
		}
		if strings.EqualFold(cand, name) || editDistance(name, cand) <= limit {
			seen[cand] = true
			out = append(out, cand)
		}
	}
	sort.Strings(out)
	return out
}

// suggest returns a "did you mean" hint, or "".
func suggest(name string, candidates []string) string {
	cl := closeNames(name, candidates)
	if len(cl) == 0 {
		return ""
	}
	return "did you mean " + strings.Join(cl, " or ") + "?"
}

// suggestSuffix returns "; did you mean X?" or "".
func suggestSuffix(name string, candidates []string) string {
	if s := suggest(name, candidates); s != "" {
		return "; " + s
	}
	return ""
}

// listHint suggests close names, or else lists them all.
func listHint(kind, name string, all []string) string {
	if s := suggest(name, all); s != "" {
		return s
	}
	return kind + " are " + strings.Join(all, ", ")
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
