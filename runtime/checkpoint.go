package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
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
	a, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.Abort()
		return err
	}
	return a.Commit()
}

// AtomicFile is a file being written in place of path, as WriteFileAtomic
// writes one but a piece at a time: the writes go to a temporary file
// beside path, which Commit renames over it, so a reader never sees a
// half-written file and a writer that stops (Abort, or killed) leaves path
// as it was. Where path exists and is not a regular file (a device, a
// pipe), the writes go straight to it.
type AtomicFile struct {
	path   string
	f      *os.File
	mode   os.FileMode
	direct bool
}

// CreateAtomic starts writing path (see AtomicFile). Where path is a
// named pipe, it waits for a reader, as a shell's > does; see
// CreateAtomicContext for a wait that can be interrupted.
func CreateAtomic(path string) (*AtomicFile, error) {
	return CreateAtomicContext(context.Background(), path)
}

// CreateAtomicContext is CreateAtomic that waits for a named pipe's
// reader only until ctx is done: a pipe nobody reads is then an error
// (at once if ctx is already done), instead of a wait that no signal
// ends.
func CreateAtomicContext(ctx context.Context, path string) (*AtomicFile, error) {
	a := &AtomicFile{path: path, mode: 0o644}
	if fi, err := os.Lstat(path); err == nil {
		if !fi.Mode().IsRegular() {
			st, err := os.Stat(path)
			if err == nil && st.IsDir() {
				return nil, fmt.Errorf("%s is a directory", path)
			}
			var f *os.File
			if err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
				f, err = openPipe(ctx, path)
			} else {
				f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			}
			if err != nil {
				return nil, err
			}
			a.f, a.direct = f, true
			return a, nil
		}
		a.mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vigen-"+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return nil, namePath(err, path)
	}
	a.f = tmp
	return a, nil
}

// openPipe opens the named pipe path for writing once a process opens it
// for reading, or fails when ctx is done first. The open that waits runs
// in a goroutine; given up, it is let go by opening the pipe for reading
// here, which ends the wait, and both ends are closed.
func openPipe(ctx context.Context, path string) (*os.File, error) {
	// A reader already there: the open does not wait.
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil || !errors.Is(err, syscall.ENXIO) {
		return f, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("cannot write %s: no process reads the named pipe", path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
			r.Close()
		}
		return nil, fmt.Errorf("cannot write %s: no process opened the named pipe for reading before the wait was stopped (%v)", path, context.Cause(ctx))
	}
}

// Direct reports whether the writes go straight to path (a device or a
// pipe), which is then never read back.
func (a *AtomicFile) Direct() bool { return a.direct }

// Write writes p to the file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	if err != nil && !a.direct {
		err = namePath(err, a.path)
	}
	return n, err
}

// Commit puts the file written in place of path (with path's permissions
// if it existed).
func (a *AtomicFile) Commit() error {
	if a.direct {
		return a.f.Close()
	}
	defer os.Remove(a.f.Name()) // a no-op after the rename
	for _, step := range []func() error{a.f.Sync, func() error { return a.f.Chmod(a.mode) }} {
		if err := step(); err != nil {
			a.f.Close()
			return namePath(err, a.path)
		}
	}
	if err := a.f.Close(); err != nil {
		return namePath(err, a.path)
	}
	return namePath(os.Rename(a.f.Name(), a.path), a.path)
}

// Abort discards what was written, leaving path as it was (a file written
// directly, not being regular, keeps what it got).
func (a *AtomicFile) Abort() {
	a.f.Close()
	if !a.direct {
		os.Remove(a.f.Name())
	}
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

// Fingerprint identifies what a fit's state depends on, so that resuming
// it under anything else is refused instead of silently continuing a
// different run: the model (the SHA-256 of its .vi source, as the
// generated package's header gives it), a hash of each data variable's
// loaded values (and each size), the options that change the fixed point
// (the method of each latent, FixParams, Smoothing, Shrinkage), and a hash
// of the params saved with the state.
type Fingerprint struct {
	Model   string            `json:"model,omitempty"`
	Data    map[string]string `json:"data"`
	Options map[string]string `json:"options"`
	Params  string            `json:"params"`
}

// HashValues returns a short hex digest of vals, each an int, a float64,
// a []int or a []float64 (lengths are hashed too, so [1 2] [3] and [1]
// [2 3] differ). Another type is hashed by its printed form (generated
// code passes only these).
func HashValues(vals ...any) string {
	h := sha256.New()
	var buf [8]byte
	put := func(h hash.Hash, u uint64) {
		binary.LittleEndian.PutUint64(buf[:], u)
		h.Write(buf[:])
	}
	for _, v := range vals {
		switch x := v.(type) {
		case int:
			put(h, 1)
			put(h, uint64(x))
		case float64:
			put(h, 2)
			put(h, math.Float64bits(x))
		case []int:
			put(h, 3)
			put(h, uint64(len(x)))
			for _, e := range x {
				put(h, uint64(e))
			}
		case []float64:
			put(h, 4)
			put(h, uint64(len(x)))
			for _, e := range x {
				put(h, math.Float64bits(e))
			}
		default:
			put(h, 5)
			fmt.Fprintf(h, "%T %v;", v, v)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// HashJSON returns a short hex digest of the JSON encoding of v (which
// for float64 values round-trips exactly, so a decoded copy of v hashes
// the same).
func HashJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:12])
}

// CheckResume compares the fingerprint saved with a run (saved, nil if it
// has none) with the one of the fit that would resume it (now), given the
// hash of the params as read back (params). It returns an error saying
// what differs, or nil.
func CheckResume(saved, now *Fingerprint, params string) error {
	if saved == nil {
		return errors.New("resume: the result has no fingerprint of the data and options it was fitted with (written by an older vigen?); start from it with Options.Start instead")
	}
	var diffs []string
	switch {
	case saved.Model == now.Model:
	case saved.Model == "":
		diffs = append(diffs, "the checkpoint does not record the model it was fitted with (written by an older vigen?)")
	default:
		diffs = append(diffs, fmt.Sprintf("the model is not the one the checkpoint was fitted with (its source's sha256 is %s, the checkpoint's %s): an edited model starts afresh", short(now.Model), short(saved.Model)))
	}
	diffs = append(diffs, dataDiffs(saved.Data, now.Data, "the checkpoint's", "the checkpoint was fitted to")...)
	for _, k := range unionKeys(saved.Options, now.Options) {
		a, okA := saved.Options[k]
		b, okB := now.Options[k]
		if !okA {
			a = "(unset)"
		}
		if !okB {
			b = "(unset)"
		}
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s is %s, the checkpoint was fitted with %s", k, b, a))
		}
	}
	if saved.Params != params {
		diffs = append(diffs, "its params are not the ones it was saved with (removed or edited)")
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("resume: refusing to continue a different run: %s", strings.Join(diffs, "; "))
}

// dataDiffs says how the data hashes now differ from saved, those of
// theirs ("the checkpoint's"), which what was fitted to or computed for.
func dataDiffs(saved, now map[string]string, theirs, what string) []string {
	var diffs []string
	for _, k := range unionKeys(saved, now) {
		a, okA := saved[k]
		b, okB := now[k]
		switch {
		case !okA:
			diffs = append(diffs, fmt.Sprintf("%s is in the data but not in %s", k, theirs))
		case !okB:
			diffs = append(diffs, fmt.Sprintf("%s is in %s data but not in this data", k, theirs))
		case a != b:
			diffs = append(diffs, fmt.Sprintf("the values of %s differ from those %s", k, what))
		}
	}
	return diffs
}

// short is the first 12 digits of a hex digest, as messages show it.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12] + "…"
	}
	if hash == "" {
		return "unknown"
	}
	return hash
}

func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// WithParams returns a copy of fp (sharing its maps) whose Params is the
// hash of params, the Params of the result it is saved with.
func (fp *Fingerprint) WithParams(params any) *Fingerprint {
	c := *fp
	c.Params = HashJSON(params)
	return &c
}

// OfModel sets fp's Model, the SHA-256 of the model's .vi source, and
// returns fp (generated code: opts.Fingerprint(…).OfModel("…")).
func (fp *Fingerprint) OfModel(sourceHash string) *Fingerprint {
	fp.Model = sourceHash
	return fp
}

// FormatOption is the form of a float option in a Fingerprint.
func FormatOption(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
