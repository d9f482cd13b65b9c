package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/host/internal/wasi"
)

// ErrStopped is returned by Instance.Call on an instance that an earlier
// call stopped with an error: the guest's state is undefined after a trap,
// an exit, a deadline or a blocking sleep, so it is never called again.
var ErrStopped = errors.New("sandbox: the instance stopped at an earlier error; close it")

// ErrClosed is returned by Instance.Call on an instance that was closed.
var ErrClosed = errors.New("sandbox: the instance is closed")

// TrapError is returned when the guest trapped: a Go panic or fatal error
// (whose message the guest wrote to stderr first), or a wasm fault such as
// an out-of-bounds access.
type TrapError struct {
	// Export is the function that was called.
	Export string
	// Err is the runtime's description of the trap, with the wasm stack.
	Err error
}

func (e *TrapError) Error() string { return fmt.Sprintf("sandbox: %s trapped: %v", e.Export, e.Err) }

func (e *TrapError) Unwrap() error { return e.Err }

// TimerError is returned when a call left a timer of the time package
// running in a deterministic guest (of a module package wasmrewrite
// rewrote), which an orchestration cannot keep. Call is the function of
// wasmrewrite.TimerCalls that started the first of those it left.
type TimerError struct {
	Call string
}

func (e *TimerError) Error() string {
	return fmt.Sprintf("sandbox: the guest left a timer of the time package running (%s)", e.Call)
}

// unusable returns why an instance that is closed, or stopped at an
// earlier error, takes no call, or nil.
func unusable(closed, stopped bool) error {
	switch {
	case closed:
		return ErrClosed
	case stopped:
		return ErrStopped
	}
	return nil
}

// callError turns how a call into the guest ended into the error Call
// returns: err from the runtime, slept from the instance's Env.TakeSleep,
// and timer the function that started a timer of the time package that a
// deterministic guest left running (empty if it left none). In order of precedence, the
// error wraps *wasi.ExitError, *wasi.BudgetError, or is a *TimerError
// (before a blocking sleep: a guest that waits on such a timer started it
// first), or wraps wasi.ErrBlockingSleep, ctx's error, or is a *TrapError.
func callError(ctx context.Context, export string, err error, slept time.Duration, timer string) error {
	var (
		exit   *wasi.ExitError
		budget *wasi.BudgetError
	)
	switch {
	case err == nil && slept == 0 && timer == "":
		return nil
	case errors.As(err, &exit):
		return fmt.Errorf("sandbox: %s: %w", export, exit)
	case errors.As(err, &budget):
		return fmt.Errorf("sandbox: %s: %w", export, budget)
	case timer != "" && (err == nil || errors.Is(err, wasi.ErrBlockingSleep)):
		return &TimerError{Call: timer}
	case err == nil || errors.Is(err, wasi.ErrBlockingSleep):
		// The error speaks to the orchestration's author, who has no use
		// for the export's name.
		return fmt.Errorf("%w (it waited %s)", wasi.ErrBlockingSleep, slept)
	case ctx.Err() != nil:
		return fmt.Errorf("sandbox: %s: %w", export, ctx.Err())
	}
	return &TrapError{Export: export, Err: err}
}
