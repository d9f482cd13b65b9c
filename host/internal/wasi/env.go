package wasi

import (
	"context"
	"io"

	"math/rand/v2"
	"net/http"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/internal/wasmrewrite"
)

// Env answers one instance's WASI calls. It is used by one call at a time.
type Env struct {
	deterministic bool
	// logical is the deterministic wall clock, in Unix nanoseconds; mono the
	// deterministic monotonic clock, which only moves forward.
	logical, mono int64
	// slept is how long a deterministic guest waited on the clock since the
	// last TakeSleep, in waits separate waits.
	slept time.Duration
	waits int
	rand  *rand.ChaCha8
	// start anchors the real monotonic clock.
	start   time.Time
	environ []string
	stdout  io.Writer
	stderr  io.Writer
	// allowHTTP holds the hosts (and host:ports) HTTP requests may reach,
	// through httpClient; pending is the encoded response http_response
	// hands over next.
	allowHTTP  map[string]bool
	httpClient *http.Client
	pending    []byte
	// activation is the one the guest applies (SetActivation).
	activation *abi.Activation
	// stepBudget is how many loop iterations one activation may run (zero:
	// any number); yields counts the sched_yield calls of the activation
	// being applied, one every wasmrewrite.YieldEvery iterations.
	stepBudget, yields uint64
	// beat takes the heartbeats of the activity attempt a real
	// environment runs (SetHeartbeat).
	beat func(ctx context.Context, details []byte) uint32
	// preopen is set when fd 3 is the scratch directory ScratchPath
	// (OfferScratch), whose files are scratch's, the attempt's
	// (SetScratch); lastFd is the last fd a file of the instance had.
	preopen bool
	scratch *Scratch
	lastFd  uint32
}

// NewDeterministic returns the environment of an orchestration: every answer
// is a function of seed and of the logical time set with SetTime. Nil
// writers discard.
func NewDeterministic(seed [32]byte, stdout, stderr io.Writer) *Env {
	// The monotonic clock starts above zero: Go's runtime refuses to start
	// on a clock that reads zero.
	return &Env{deterministic: true, mono: 1, rand: rand.NewChaCha8(seed), stdout: orDiscard(stdout), stderr: orDiscard(stderr)}
}

// NewReal returns the environment of an activity: the real clock, real
// randomness, and the environment variables environ ("KEY=value"). Nil
// writers discard.
func NewReal(environ []string, stdout, stderr io.Writer) *Env {
	return &Env{start: time.Now(), environ: environ, stdout: orDiscard(stdout), stderr: orDiscard(stderr)}
}

// Starting returns the Env a guest's start (_initialize, where the Go
// runtime seeds its own randomness: map order, the global sources of
// math/rand) runs under, for an instance that answers from e afterwards.
// For a real e it is e. For a deterministic e it is fixed: a zero seed, the
// logical clock at zero, no output but e's stderr (where a guest that fails
// to start says why), so that every orchestration instance of a module
// starts in the same state, on every start path and every runtime. The
// monotonic clock starts where e's does, so the guest sees no jump when e
// takes over.
func (e *Env) Starting() *Env {
	if !e.deterministic {
		return e
	}
	return NewDeterministic([32]byte{}, nil, e.stderr)
}

// SetStepBudget bounds the loop iterations one activation of a
// deterministic guest runs (zero: no bound). A module rewritten by package
// wasmrewrite yields every wasmrewrite.YieldEvery iterations, counted from
// the start of each call into it (a bulk instruction charges them by its
// length first: one per 1 << wasmrewrite.ChargeShift bytes or table
// entries), so the guest is stopped with a *BudgetError at the first yield
// past the budget: at the same point on every replay and every runtime. A
// real Env ignores it.
func (e *Env) SetStepBudget(iterations uint64) { e.stepBudget = iterations }

// countYield counts a yield of the activation being applied, and stops the
// guest once it is past its budget.
func (e *Env) countYield() {
	if !e.deterministic || e.stepBudget == 0 {
		return
	}
	e.yields++
	if used := e.yields * wasmrewrite.YieldEvery; used > e.stepBudget {
		panic(&BudgetError{Budget: e.stepBudget, Used: used})
	}
}

// Deterministic reports whether e is an orchestration's environment, not an
// activity's.
func (e *Env) Deterministic() bool { return e.deterministic }

// Environ returns the environment variables the guest sees ("KEY=value").
func (e *Env) Environ() []string { return e.environ }

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// SetTime sets the logical time (Unix nanoseconds) a deterministic
// environment reports. The monotonic clock follows it but never goes back.
// A real environment ignores it.
func (e *Env) SetTime(unixNanos int64) {
	e.logical = unixNanos
	e.mono = max(e.mono, unixNanos)
}

// TakeSleep returns how long a deterministic guest waited on the clock since
// the last call, and resets it; a runtime calls it after each call into the
// guest, and a call that waited at all fails with ErrBlockingSleep.
//
// Such a wait does not stop the guest at once: the monotonic clock jumps to
// the end of the wait and the guest carries on. The Go runtime itself waits
// on the clock a few times while it dies (1 ms twice before it prints a
// panic or a fatal error such as a deadlock), and those must reach stderr
// and be reported as what they are. Only a guest that keeps waiting (more
// than maxWaits times in one call) is stopped at once.
func (e *Env) TakeSleep() time.Duration {
	d := e.slept
	e.slept, e.waits = 0, 0
	return d
}

// Aside keeps what a call into a deterministic guest changes in e that a
// later call would see (the random stream, the clocks, the sleeps and
// yields of the step), and returns the function that puts it back: a
// query runs between the two, so that the steps after it see e as if it
// had not run. The step's count of yields starts again, so a query has a
// step's budget.
func (e *Env) Aside() (restore func()) {
	saved := *e
	var stream rand.ChaCha8
	if e.rand != nil {
		stream = *e.rand
	}
	e.yields = 0
	return func() {
		*e = saved
		if e.rand != nil {
			*e.rand = stream
		}
	}
}
