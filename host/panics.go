package host

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync/atomic"

	"github.com/durabox/durabox/engine"
)

// The boundaries where the host recovers a panic of its own code (a guest's
// panic is a trap in its sandbox, never a Go panic), the values of the
// boundary label of durabox_panics_total. Past each boundary the panic
// ends what was served there and nothing else: the process goes on.
const (
	// boundaryTurn is one instance's turn: before its commit the instance
	// fails, with the panic and its stack in its history; after, the turn
	// stands and the instance goes on.
	boundaryTurn = "turn"
	// boundaryActivity is one activity attempt, which then fails with the
	// panic and its stack (the orchestration sees an activity error), or
	// the recording of its result.
	boundaryActivity = "activity"
	// boundaryLease is the timer that extends an activity attempt's lease:
	// the attempt is stopped, and fails with the panic.
	boundaryLease = "lease"
	// boundaryFetch is a fetcher taking work for the workers: it waits a
	// while, and takes work again.
	boundaryFetch = "fetch"
	// boundaryModule is the loading of a module from the store: the load
	// fails, and the next use of the module loads it again.
	boundaryModule = "module"
	// boundarySweep is one retention sweep; the next one comes at its time.
	boundarySweep = "sweep"
	// boundaryUpgrade is the check (and move) of one instance in an
	// upgrade, reported as failing.
	boundaryUpgrade = "upgrade"
	// boundaryHTTP is one HTTP request, answered with 500.
	boundaryHTTP = "http"
	// boundaryMetrics is the reading of the queue and the live cache when
	// the metrics are gathered: that scrape goes without them.
	boundaryMetrics = "metrics"
)

// maxPanicValue bounds the text of a panic's value that a failure and a log
// line keep: the value may quote what a guest supplied.
const maxPanicValue = 1 << 10

// panicError is a panic recovered at a boundary: its value, and the stack
// of the goroutine where it was raised.
type panicError struct {
	value string
	stack string
}

func (p *panicError) Error() string { return "panic: " + p.value }

// failure is the failure of what the panic ended, which what names ("the
// host panicked running its turn").
func (p *panicError) failure(what string) *engine.Failure {
	return &engine.Failure{
		Message: fmt.Sprintf("%s (a bug in durabox, which went on serving everything else; the details hold the stack): %s", what, p),
		Details: p.stack,
	}
}

// guard recovers the panics at the host's boundaries.
type guard struct {
	log *slog.Logger
	// metrics count the panics; nil counts none (a handler on another API
	// than a Host).
	metrics *Metrics
}

// catch, deferred at a boundary, recovers a panic: it logs it with its
// stack and attrs, counts it, and hands it to then (nil: nothing more to
// do). A panic in then is recovered, logged and counted in its turn.
// http.ErrAbortHandler, which a handler raises to abort its answer on
// purpose, goes on up to net/http.
func (g guard) catch(boundary string, then func(*panicError), attrs ...any) {
	r := recover()
	if r == nil {
		return
	}
	if r == http.ErrAbortHandler {
		panic(r)
	}
	p := &panicError{value: fmt.Sprint(r), stack: string(debug.Stack())}
	if len(p.value) > maxPanicValue {
		p.value = p.value[:maxPanicValue] + "…"
	}
	g.log.Error("panic recovered; the host goes on", append([]any{"boundary", boundary, "panic", p.value, "stack", p.stack}, attrs...)...)
	if g.metrics != nil {
		g.metrics.panics.WithLabelValues(boundary).Inc()
	}
	if then != nil {
		defer g.catch(boundary, nil, attrs...)
		then(p)
	}
}

// testPanic, set only by the tests (export_test.go), is called at each
// point where the tests inject a panic, with that point and what is
// served there (an instance id, a module hash, a request's path).
var testPanic atomic.Pointer[func(point, key string)]

// The points where the tests inject a panic.
const (
	pointTurn          = "turn"
	pointTurnCommitted = "turn committed"
	pointActivity      = "activity"
	pointActivityDone  = "activity recorded"
	pointLease         = "lease"
	pointFetch         = "fetch"
	pointModule        = "module"
	pointSweep         = "sweep"
	pointUpgrade       = "upgrade"
	pointHTTP          = "http"
	pointMetrics       = "metrics"
)

// mayPanic panics if a test asks it to at point, serving key.
func mayPanic(point, key string) {
	if f := testPanic.Load(); f != nil {
		(*f)(point, key)
	}
}
