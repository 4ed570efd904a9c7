package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Checkpoint says where and how often a fit saves its state, so that a
// long run can be resumed after a crash or a deliberate stop.
type Checkpoint struct {
	// Path is the file the state is written to, as the JSON of a Result
	// whose status is "checkpoint".
	Path string
	// Every is the number of iterations between saves; 0 saves nothing.
	Every int
}

// On reports whether checkpoints are to be written.
func (c Checkpoint) On() bool { return c.Every > 0 && c.Path != "" }

// CheckpointStatus is the status of a Result saved as a checkpoint.
const CheckpointStatus = "checkpoint"

// CheckCheckpointPath refuses a checkpoint path that holds something other
// than a checkpoint of the model: a fit never overwrites a file it did not
// write. A missing file is fine.
func CheckCheckpointPath(path, model string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var head struct {
		Model  string `json:"model"`
		Status string `json:"status"`
	}
	if json.Unmarshal(b, &head) != nil || head.Model != model || head.Status != CheckpointStatus {
		return fmt.Errorf("checkpoint: refusing to overwrite %s: it is not a checkpoint of model %s", path, model)
	}
	return nil
}

// WriteCheckpoint writes v as JSON to path through a temporary file in the
// same directory and a rename, so an interruption leaves the previous
// checkpoint whole.
func WriteCheckpoint(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory (named .vigen-NAME-*.tmp), synced, and a rename over path, so an
// interruption leaves the previous file whole. The file keeps the mode of
// the one it replaces, or gets 0644. A path that exists and is not a
// regular file (a device such as /dev/null, a pipe, /dev/stdout, a symbolic
// link) is written directly instead, never renamed over; a directory is an
// error. Errors name path, not the temporary file.
func WriteFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Lstat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return writeInPlace(path, data)
		}
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vigen-"+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return namePath(err, path)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return namePath(err, path)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return namePath(err, path)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return namePath(err, path)
	}
	if err := tmp.Close(); err != nil {
		return namePath(err, path)
	}
	return namePath(os.Rename(tmp.Name(), path), path)
}

// DecodeResult decodes the JSON of a generated package's Result into v,
// checking that it was written for model (a result of another model would
// fail later with a confusing shape error).
func DecodeResult(b []byte, model string, v any) error {
	var head struct {
		Model *string `json:"model"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	if head.Model == nil || *head.Model != model {
		got := "none"
		if head.Model != nil {
			got = *head.Model
		}
		return fmt.Errorf("result: written for model %s, not %s", got, model)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	return nil
}
