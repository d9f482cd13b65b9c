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
)
