package wasi

import (
	"errors"
	"fmt"
)

// ErrBlockingSleep is returned (wrapped, by the runtime that runs the guest)
// when a deterministic guest waited on the clock: only time.Sleep and the
// timers of the time package do that. Waiting on the real clock would not
// replay; the SDK's durable timers are recorded in history instead.
//
// Env.TakeSleep says whether a call waited, and for how long. A guest that
// keeps waiting within one call (a polling loop) is stopped at once by a
// panic with this error, which the runtime must turn into a stop of the call.
var ErrBlockingSleep = errors.New("the orchestration blocked on time.Sleep or a timer of the time package, which would not survive a restart; use ctx.Sleep or ctx.NewTimer, the SDK's durable timers")

// BudgetError stops a deterministic guest whose step ran more loop
// iterations than its budget (Env.SetStepBudget). sched_yield panics with
// it, and the runtime turns the panic into a stop of the call.
type BudgetError struct {
	// Budget is the step budget, in loop iterations; Used how many the
	// step had run when it was stopped: the first multiple of
	// wasmrewrite.YieldEvery past the budget.
	Budget, Used uint64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("wasi: the step ran %d loop iterations, past its budget of %d", e.Used, e.Budget)
}

// ExitError stops an instance that called proc_exit (os.Exit). proc_exit
// panics with it, and the runtime turns the panic into a stop of the call.
type ExitError struct {
	Code uint32
}

func (e *ExitError) Error() string { return fmt.Sprintf("wasi: exit with code %d", e.Code) }
