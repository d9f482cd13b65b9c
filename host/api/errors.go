package api

import (
	"errors"
	"fmt"

	"github.com/durabox/durabox/abi"
)

// Sentinel errors. A host wraps them with specifics (errors.Is finds
// them); the HTTP server maps them to status codes.
var (
	// ErrBadModule is returned by Deploy when the bytes are not a usable
	// Durabox module: not wasm, missing exports, wrong ABI version, or
	// importing functions the host does not provide.
	ErrBadModule = errors.New("host: module refused")
	// ErrUnknownOrchestration is returned by Start when no deployed module
	// registers the orchestration name.
	ErrUnknownOrchestration = errors.New("host: unknown orchestration")
	// ErrBadInput is returned when a request cannot be taken as it is: an
	// input or event data that is not JSON in UTF-8, an instance id or a
	// filter that is not acceptable.
	ErrBadInput = errors.New("host: bad input")
	// ErrTooLarge is returned when a payload (an input, an event's data)
	// is larger than Options.MaxPayload, or a request's body larger than
	// its limit.
	ErrTooLarge = errors.New("host: request too large")
	// ErrNotFound is returned when an instance does not exist.
	ErrNotFound = errors.New("host: instance not found")
	// ErrExecutionNotFound is returned by ExecutionHistory when the
	// instance has no such execution, or its history is no longer kept.
	ErrExecutionNotFound = errors.New("host: execution not found")
	// ErrInstanceExists is returned by Start when the id is taken.
	ErrInstanceExists = errors.New("host: instance already exists")
	// ErrNotFinished is returned by Purge when the instance has not reached
	// a terminal status.
	ErrNotFinished = errors.New("host: instance not finished")
	// ErrFinished is returned by Raise, Cancel and Terminate when the
	// instance has reached a terminal status: nothing would take the
	// message.
	ErrFinished = errors.New("host: instance finished")
	// ErrTooManyEvents is returned by Raise when the instance's execution
	// has as many persistent events, taken and waiting, as it may take
	// (engine.MaxPersistentEvents).
	ErrTooManyEvents = errors.New("host: too many persistent events")
	// ErrModuleNotFound is returned when no deployed module has the hash
	// a request names (RemoveModule), or for Replay, Upgrade, Reset,
	// StartOn and the HTTP API's DELETE /v1/modules/{hash}, a hash that is
	// it or starts with it.
	ErrModuleNotFound = errors.New("host: module not found")
	// ErrModuleInUse is returned by RemoveModule when instances run on the
	// module.
	ErrModuleInUse = errors.New("host: module in use")
	// ErrCannotRun is returned when this host cannot run a module that is
	// in its store (another host deployed it): its runtime or its
	// settings refuse the module as Deploy would. The module's instances
	// and activities wait, untouched, for a host that can run it
	// (refused.go).
	ErrCannotRun = errors.New("host: this host cannot run the module")
	// ErrNotReady is returned by Ready when the host is not serving its
	// work: it is starting or has stopped, or its store does not answer.
	ErrNotReady = errors.New("host: not ready")
	// ErrBusy is returned by Reset when a turn of the instance is running.
	ErrBusy = errors.New("host: instance busy")
	// ErrChanged is returned by Reset when the instance is no longer as the
	// plan it was given found it (its history went on).
	ErrChanged = errors.New("host: instance changed")
	// ErrDiverges is returned by Reset when the module does not replay the
	// events the reset would keep.
	ErrDiverges = errors.New("host: the module does not replay the history")
	// ErrUnknownQuery is returned by Query when the instance registers no
	// handler of the query's name; the message lists those it does.
	ErrUnknownQuery = errors.New("host: no such query")
	// ErrQueryFailed is returned by Query when the query's handler
	// returned an error, panicked or tried to change the instance, or the
	// guest crashed answering it. The instance is unharmed.
	ErrQueryFailed = errors.New("host: query failed")
	// ErrNotQueryable is returned by Query when the instance cannot answer
	// queries as it stands: its module was built before queries existed,
	// it has not begun, or its module does not replay its history.
	ErrNotQueryable = errors.New("host: the instance cannot be queried")
	// ErrNotUpdatable is returned by Update when the instance's module
	// takes no updates: it was built before updates existed.
	ErrNotUpdatable = errors.New("host: the instance takes no updates")
	// ErrTaskLost is returned to a worker that acts on a task it no
	// longer holds: it was completed, or its lease ended (no heartbeat in
	// time, or its deadline passed) and it went, or will go, to another
	// worker. The worker should drop it.
	ErrTaskLost = errors.New("host: task lost")
)

// NotFound is ErrNotFound for the instance id, which it quotes cut short
// (an id in a request may be of any length).
func NotFound(id string) error { return fmt.Errorf("%w: %s", ErrNotFound, abi.Quote(id)) }
