package runtime

// EnforceVersion is used by generated code as a compile-time guard, in the
// style of protobuf-go:
//
//	const _ = runtime.EnforceVersion(1 - runtime.MinVersion)
//	const _ = runtime.EnforceVersion(runtime.MaxVersion - 1)
//
// A negative constant converted to this unsigned type is a compile error, so a
// generated package made for runtime version 1 fails to build against a
// runtime whose supported range [MinVersion, MaxVersion] excludes 1.
type EnforceVersion uint

const (
	// Version is the version of this runtime.
	Version = 1
	// MinVersion is the oldest generated-code version this runtime supports.
	MinVersion = 1
	// MaxVersion is the newest generated-code version this runtime supports.
	MaxVersion = 1
)
