package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// writeInPlace writes data to path, which exists and is not a regular file
// (a device, a pipe, a symbolic link), by opening it for writing: no
// temporary file, no rename, nothing read.
func writeInPlace(path string, data []byte) error {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// namePath makes an error about a temporary file next to path (or the
// rename of it) name path instead, the file the user asked for.
func namePath(err error, path string) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: "write", Path: path, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: "write", Path: path, Err: le.Err}
	}
	return fmt.Errorf("write %s: %w", path, err)
}
