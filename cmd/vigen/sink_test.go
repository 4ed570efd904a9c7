package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResultSink: the fit's result goes to -out through a temporary file
// renamed into place on commit (an aborted fit leaves the old file and no
// temporary behind), or without -out through a spool copied to stdout on
// commit (nothing on stdout before, nothing left after).
func TestResultSink(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "result.json")
	if err := os.WriteFile(out, []byte(`{"old":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := newResultSink(context.Background(), out, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte(`{"new":`))
	s.Write([]byte(`2}`))
	if b, _ := os.ReadFile(out); string(b) != `{"old":1}` {
		t.Errorf("-out changed before commit: %s", b)
	}
	if err := s.commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != `{"new":2}` || s.n != 9 {
		t.Errorf("after commit -out holds %s (%d bytes counted)", b, s.n)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Errorf("-out's permissions became %v, want the old file's 0600", fi.Mode().Perm())
	}
	s, err = newResultSink(context.Background(), out, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte(`{"partial`))
	s.abort()
	if b, _ := os.ReadFile(out); string(b) != `{"new":2}` {
		t.Errorf("an aborted result changed -out: %s", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}

	var stdout bytes.Buffer
	s, err = newResultSink(context.Background(), "", &stdout, false)
	if err != nil {
		t.Fatal(err)
	}
	spool := s.spool.Name()
	s.Write([]byte(strings.Repeat("x", 100000)))
	if stdout.Len() != 0 {
		t.Errorf("%d bytes on stdout before commit", stdout.Len())
	}
	if err := s.commit(); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 100000 {
		t.Errorf("stdout got %d bytes, want 100000", stdout.Len())
	}
	if b, err := s.result(); err != nil || len(b) != 100000 {
		t.Errorf("reading the result back for plots: %d bytes, %v", len(b), err)
	}
	s.cleanup()
	if _, err := os.Stat(spool); !os.IsNotExist(err) {
		t.Errorf("the spool %s is left behind (%v)", spool, err)
	}
}

// TestResultSinkDeviceReadBack: -out on a device is written directly and
// never read; with plots asked for, the sink keeps a spool to read the
// result back from, removed by cleanup.
func TestResultSinkDeviceReadBack(t *testing.T) {
	s, err := newResultSink(context.Background(), os.DevNull, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if s.spool == nil || !s.out.Direct() {
		t.Fatalf("-out %s with plots: spool %v, direct %v", os.DevNull, s.spool, s.out.Direct())
	}
	spool := s.spool.Name()
	s.Write([]byte(`{"x":1}`))
	if err := s.commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := s.result(); err != nil || string(b) != `{"x":1}` {
		t.Errorf("result read back: %q, %v", b, err)
	}
	s.cleanup()
	if _, err := os.Stat(spool); !os.IsNotExist(err) {
		t.Errorf("the spool %s is left behind (%v)", spool, err)
	}
	// without plots, no spool
	s, err = newResultSink(context.Background(), os.DevNull, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.spool != nil {
		t.Errorf("a spool without plots")
	}
	s.cleanup()
}
