package runtime

import (
	"math"
	"testing"
)

// TestAnnealSchedule: both schedules start at T0, end at exactly 1 at
// Length and stay there, never increase, and pass through their
// hand-computed midpoints (linear: (T0+1)/2; geometric: √T0).
func TestAnnealSchedule(t *testing.T) {
	for _, a := range []Anneal{{T0: 10, Length: 100}, {T0: 10, Length: 100, Geometric: true}, {T0: 3, Length: 0.5}} {
		if got := a.At(0); got != a.T0 {
			t.Errorf("%v: T(0) = %v", a, got)
		}
		if got := a.At(a.Length); got != 1 {
			t.Errorf("%v: T(Length) = %v, want exactly 1", a, got)
		}
		if got := a.At(10 * a.Length); got != 1 {
			t.Errorf("%v: T after the schedule = %v", a, got)
		}
		prev := math.Inf(1)
		for i := 0; i <= 1000; i++ {
			T := a.At(a.Length * float64(i) / 900)
			if T > prev || T < 1 {
				t.Fatalf("%v: T = %v after %v, not non-increasing in [1, T0]", a, T, prev)
			}
			prev = T
		}
		mid, want := a.At(a.Length/2), (a.T0+1)/2
		if a.Geometric {
			want = math.Sqrt(a.T0)
		}
		if math.Abs(mid-want) > 1e-12 {
			t.Errorf("%v: T(Length/2) = %v, want %v", a, mid, want)
		}
	}
}

func TestParseAnneal(t *testing.T) {
	for _, s := range []string{"linear:10:100", "geometric:6:50", "linear:1:0.01"} {
		a, err := ParseAnneal(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if a.String() != s {
			t.Errorf("%s read back as %s", s, a)
		}
	}
	for _, s := range []string{"", "linear:10", "cubic:10:100", "linear:0.5:100", "linear:10:0", "linear:x:10", "linear:10:-3", "geometric:inf:10", "linear:NaN:10"} {
		if _, err := ParseAnneal(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}
