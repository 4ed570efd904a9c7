//go:build unix

package codegen

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// sharedModuleDir is the directory of the shared build's module for the
// repository at root: one that stays between runs, in the user's cache
// directory, so that the packages a run wrote and built before are built
// again from the build cache (cmd/go keys a package's compiled form by its
// directory as well as its content). It is locked against the other test
// binaries that write and build in it until unlock is called. Where there
// is no cache directory, it is a new temporary directory (temporary).
func sharedModuleDir(root string) (dir string, temporary bool, unlock func(), err error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		dir, err := os.MkdirTemp("", "vigen-e2e-")
		return dir, true, func() {}, err
	}
	sum := sha256.Sum256([]byte(root))
	dir = filepath.Join(cache, "vigen-e2e", fmt.Sprintf("%x", sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", false, nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return "", false, nil, err
	}
	return dir, false, func() { f.Close() }, nil // closing the file releases the lock
}
