//go:build !unix

package codegen

import "os"

// sharedModuleDir is the directory of the shared build's module: without
// a file lock to share one between runs, a new temporary directory.
func sharedModuleDir(root string) (dir string, temporary bool, unlock func(), err error) {
	dir, err = os.MkdirTemp("", "vigen-e2e-")
	return dir, true, func() {}, err
}
