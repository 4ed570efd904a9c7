package ir

import (
	"errors"
	"testing"
)

// Join sorts positioned errors by position and drops duplicates (an error
// about a statement read by two latents is found by both), keeps other
// errors in order, and lets errors.As find an *Error in its result.
func TestJoin(t *testing.T) {
	if Join() != nil || Join(nil, nil) != nil {
		t.Fatal("Join of no errors is not nil")
	}
	late := Errorf(Pos{File: "m.vi", Line: 9, Col: 2}, "late").Hintf("fix it")
	early := Errorf(Pos{File: "m.vi", Line: 3, Col: 5}, "early")
	dup := Errorf(Pos{File: "m.vi", Line: 9, Col: 2}, "late").Hintf("fix it")
	err := Join(late, nil, ErrorList{early, dup})
	want := "m.vi:3:5: early\nm.vi:9:2: late\n\thint: fix it"
	if err == nil || err.Error() != want {
		t.Fatalf("Join = %q, want %q", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Msg != "early" {
		t.Errorf("errors.As found %v, want the first error by position", e)
	}
	plain := errors.New("internal: no bound")
	err = Join(late, plain, early, errors.New("internal: no bound"))
	want = "m.vi:9:2: late\n\thint: fix it\ninternal: no bound\nm.vi:3:5: early"
	if err.Error() != want {
		t.Errorf("Join with an unpositioned error = %q, want %q (in order, duplicates dropped)", err, want)
	}
	if !errors.As(err, &e) {
		t.Error("errors.As finds no *Error in a mixed Join")
	}
}
