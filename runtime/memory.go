package runtime

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// Generated NewModel functions check, once the sizes are known, that the fit
// will not allocate more than MemoryLimit (Sizes.CheckAllocs), and LoadData
// refuses a document larger than DataLimit: a size given as 1e12, or a data
// file that never ends (/dev/zero), is a clear error naming the size or the
// input instead of a crash in makeslice or the out-of-memory killer.
//
// The default limit is the memory the process can have: GOMEMLIMIT if it is
// set (the Go runtime's own knob for the memory a program may use), else the
// cgroup limit of the container or the machine's physical memory. A fit
// whose arrays exceed that would thrash or be killed, so refusing it up
// front loses nothing. MaxFitBytes overrides it for a program that knows
// better.

// MaxFitBytes, if positive, is the most memory in bytes that a generated
// NewModel lets a fit allocate; 0 means the default (see MemoryLimit). Set
// it before loading data.
var MaxFitBytes int64

// MaxDataBytes, if positive, is the size in bytes of the largest JSON data
// document LoadData reads; 0 means a quarter of MemoryLimit (the decoded
// arrays take up to about the document's size, and a fit several times
// its data). Set it before loading data.
var MaxDataBytes int64

// MemoryLimit returns the most memory in bytes a fit may allocate and what
// the number is (for messages): MaxFitBytes if set, else GOMEMLIMIT if set,
// else the smaller of the cgroup memory limit and the physical memory
// (Linux), else 1 TiB.
func MemoryLimit() (int64, string) {
	if MaxFitBytes > 0 {
		return MaxFitBytes, "runtime.MaxFitBytes"
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return l, "GOMEMLIMIT"
	}
	if l := systemMemory(); l > 0 {
		return l, "the memory of this machine; set GOMEMLIMIT to change it"
	}
	return 1 << 40, "a default of 1 TiB; set GOMEMLIMIT to change it"
}

// DataLimit returns the size in bytes of the largest data document LoadData
// reads, and what the number is (for messages).
func DataLimit() (int64, string) {
	if MaxDataBytes > 0 {
		return MaxDataBytes, "runtime.MaxDataBytes"
	}
	l, what := MemoryLimit()
	return l / 4, "a quarter of " + what
}

var systemMemory = sync.OnceValue(func() int64 {
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 && kb < math.MaxInt64>>10 {
					total = kb << 10
				}
			}
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil { // "max" when unlimited
		if l, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && l > 0 && (total == 0 || l < total) {
			total = l
		}
	}
	return total
})

// Alloc describes arrays a fit allocates, for Sizes.CheckAllocs: Copies
// arrays (at least one) of float64s (or ints) whose length is the product of
// the sizes named in Dims. A dimension "@w" is the number of entries of the
// bag w (see Sizes.SetEntries).
type Alloc struct {
	What   string
	Dims   []string
	Copies int
}

// SetEntries records the number of entries of bag data name, the length of
// the dimension "@name" in an Alloc.
func (s *Sizes) SetEntries(name string, n int) {
	if s.bound == nil {
		s.bound = map[string]sizeBinding{}
	}
	s.bound["@"+name] = sizeBinding{n: n, what: fmt.Sprintf("%q entries", name)}
}

// CheckAllocs checks that the arrays allocs, with the sizes bound in s, add
// up to at most MemoryLimit bytes (8 per element). If not, the error names
// the size that makes the largest of them large (one given explicitly if
// there is one), the total and the limit:
//
//	size "K" = 1000000000000: the fit would allocate 1.1 PiB, more than the
//	limit of 23 GiB (the memory of this machine; ...); the largest part is
//	q(beta) (K×V = 1000000000000×50 numbers, 3 copies)
func (s *Sizes) CheckAllocs(allocs []Alloc) error {
	limit, source := MemoryLimit()
	total, worst, worstBytes := 0.0, -1, 0.0
	for i, a := range allocs {
		b := 8 * float64(max(a.Copies, 1))
		for _, d := range a.Dims {
			b *= float64(s.bound[d].n)
		}
		total += b
		if b > worstBytes {
			worst, worstBytes = i, b
		}
	}
	// 2⁶³ bytes: beyond it a length overflows int whatever the limit.
	if total <= float64(limit) && total < math.MaxInt64 {
		return nil
	}
	a := allocs[worst]
	name := ""
	for _, d := range a.Dims {
		b, cur := s.bound[d], s.bound[name]
		if name == "" || b.given && !cur.given || b.given == cur.given && b.n > cur.n {
			name = d
		}
	}
	var dims, vals []string
	for _, d := range a.Dims {
		dims = append(dims, strings.TrimPrefix(d, "@")+map[bool]string{true: " entries"}[strings.HasPrefix(d, "@")])
		vals = append(vals, strconv.Itoa(s.bound[d].n))
	}
	copies := ""
	if a.Copies > 1 {
		copies = fmt.Sprintf(", %d copies", a.Copies)
	}
	subject := fmt.Sprintf("size %q = %d", name, s.bound[name].n)
	if strings.HasPrefix(name, "@") {
		subject = fmt.Sprintf("data %q has %d entries", name[1:], s.bound[name].n)
	}
	return fmt.Errorf("%s: the fit would allocate %s, more than the limit of %s (%s); the largest part is %s (%s = %s numbers%s)",
		subject, FormatBytes(total), FormatBytes(float64(limit)), source, a.What, strings.Join(dims, "×"), strings.Join(vals, "×"), copies)
}

// FormatBytes writes a number of bytes in binary units: 512 B, 1.5 KiB, 23 GiB.
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
	u := 0
	for b >= 1024 && u < len(units)-1 {
		b /= 1024
		u++
	}
	if u == 0 || b >= 100 {
		return fmt.Sprintf("%.0f %s", b, units[u])
	}
	return fmt.Sprintf("%.3g %s", b, units[u])
}

// FreeCopies collects garbage now. LoadData calls it after checking the data
// with a Model it then drops: that Model holds a copy of every array, as
// large as the data, which would otherwise still occupy the heap when the
// caller builds its own Model (on a 1 GB data file, 1.2 GB at the peak
// instead of 0.8).
func FreeCopies() { goruntime.GC() }
