package runtime

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Notes receives the notes of data loading: what is not an error but what
// a user should know, such as keys of the data file that the model does not
// declare (ignored, as CmdStan ignores them). The default writes
// "note: MSG" to standard error. Set it to nil to silence the notes, or to
// a function to capture them (the driver `vigen run` builds prefixes them
// with the model's name, and -quiet silences them). Set it before loading
// data; it is called from the goroutine that loads.
var Notes = func(msg string) { fmt.Fprintln(os.Stderr, "note: "+msg) }

// note sends msg to Notes, if set.
func note(msg string) {
	if f := Notes; f != nil {
		f(msg)
	}
}

// unknownKeysNote describes the keys of a data file that are not among
// known, sorted, each with the known names it is close to (equal ignoring
// case, or within a small edit distance): a misspelled const override is
// otherwise silently replaced by the const's default.
func unknownKeysNote(unknown, known []string) string {
	unknown = append([]string(nil), unknown...)
	sort.Strings(unknown)
	parts := make([]string, len(unknown))
	for i, k := range unknown {
		parts[i] = strconv.Quote(k)
		if cl := closeKeys(k, known); len(cl) > 0 {
			parts[i] += " (did you mean " + strings.Join(quoteAll(cl), " or ") + "?)"
		}
	}
	what := "a key"
	if len(unknown) > 1 {
		what = strconv.Itoa(len(unknown)) + " keys"
	}
	return "data: ignoring " + what + " that the model does not declare: " + strings.Join(parts, ", ")
}

// closeKeys returns the names of known equal to key ignoring case or within
// edit distance 1 (2 for keys longer than 4 bytes), sorted.
func closeKeys(key string, known []string) []string {
	var out []string
	limit := 1
	if len(key) > 4 {
		limit = 2
	}
	for _, k := range known {
		if k != key && (strings.EqualFold(k, key) || editDistance(k, key) <= limit) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func quoteAll(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return q
}

// editDistance is the Levenshtein distance between a and b (bytes).
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
