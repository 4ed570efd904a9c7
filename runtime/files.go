package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

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
