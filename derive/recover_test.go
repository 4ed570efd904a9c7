package derive

import (
	"errors"
	"testing"
)

// TestRecoverLowerError checks that a deferred recoverLowerError turns a
// lowerError panic into the function's (zero, error) results and lets any
// other panic through.
func TestRecoverLowerError(t *testing.T) {
	lower := func(p any) (v *int, err error) {
		defer recoverLowerError(&v, &err)
		x := 1
		v = &x
		panic(p)
	}
	want := errors.New("cannot lower")
	v, err := lower(lowerError{want})
	if v != nil || err != want {
		t.Errorf("lowerError panic: got (%v, %v), want (nil, %v)", v, err, want)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("other panic: recovered %v, want it to go on", r)
		}
	}()
	lower("other")
	t.Error("an other panic was swallowed")
}
