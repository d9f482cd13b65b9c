package host

import "errors"

// Sentinel errors. The host wraps them with specifics; the HTTP server maps
// them to status codes.
var (
	// ErrBadModule is returned by Deploy when the bytes are not a usable
	// Durabox module: not wasm, missing exports, wrong ABI version, or
	// importing functions the host does not provide.
	ErrBadModule = errors.New("host: module refused")
	// ErrUnknownOrchestration is returned by Start when no deployed module
	// registers the orchestration name.
	ErrUnknownOrchestration = errors.New("host: unknown orchestration")
	// ErrBadInput is returned by Start when the input is not valid JSON or
	// the instance id is not acceptable.
	ErrBadInput = errors.New("host: bad input")
	// ErrNotFound is returned when an instance does not exist.
	ErrNotFound = errors.New("host: instance not found")
	// ErrInstanceExists is returned by Start when the id is taken.
	ErrInstanceExists = errors.New("host: instance already exists")
	// ErrNotFinished is returned by Purge when the instance has not reached
	// a terminal status.
	ErrNotFinished = errors.New("host: instance not finished")
	// ErrUnknownModule is returned when no deployed module has the hash, or
	// a hash starting with the prefix, that a request names.
	ErrUnknownModule = errors.New("host: unknown module")
	// ErrBusy is returned by Reset when a turn of the instance is running.
	ErrBusy = errors.New("host: instance busy")
	// ErrChanged is returned by Reset when the instance is no longer as the
	// plan it was given found it (its history went on).
	ErrChanged = errors.New("host: instance changed")
	// ErrDiverges is returned by Reset when the module does not replay the
	// events the reset would keep.
	ErrDiverges = errors.New("host: the module does not replay the history")
)
