//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes what the tests build outside t.TempDir(): the vigen
// binary that builtVigen (signal_linux_test.go, Linux only, as this file
// is: elsewhere the package's tests did not compile) shares between tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if vigenBin != "" {
		os.RemoveAll(filepath.Dir(vigenBin))
	}
	os.Exit(code)
}
