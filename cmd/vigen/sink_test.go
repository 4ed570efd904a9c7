package main

import (
	"bytes"
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
	s, err := newResultSink(out, nil)
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
	s, err = newResultSink(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte(`{"partial`))
	s.out.Abort()
	if b, _ := os.ReadFile(out); string(b) != `{"new":2}` {
		t.Errorf("an aborted result changed -out: %s", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}

	var stdout bytes.Buffer
	s, err = newResultSink("", &stdout)
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
	s.abort()
	if _, err := os.Stat(spool); !os.IsNotExist(err) {
		t.Errorf("the spool %s is left behind (%v)", spool, err)
	}
}
