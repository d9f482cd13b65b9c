// Package guard recovers the panics of the host's own code at the
// boundaries where it serves one thing (a turn, an activity attempt, a
// request…): a panic ends what was served there and nothing else, is
// logged with its stack and counted (durabox_panics_total{boundary}), and
// the process goes on. A guest's panic is a trap in its sandbox, never a
// Go panic; this is about bugs in Durabox.
package guard

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
	// Turn is one instance's turn: before its commit the instance
	// fails, with the panic and its stack in its history; after, the turn
	// stands and the instance goes on.
	Turn = "turn"
	// Activity is one activity attempt, which then fails with the
	// panic and its stack (the orchestration sees an activity error), or
	// the recording of its result.
	Activity = "activity"
	// Lease is the timer that extends an activity attempt's lease:
	// the attempt is stopped, and fails with the panic.
	Lease = "lease"
	// Fetch is a fetcher taking work for the workers: it waits a
	// while, and takes work again.
	Fetch = "fetch"
	// Module is the loading of a module from the store: the load
	// fails, and the next use of the module loads it again.
	Module = "module"
	// Sweep is one retention sweep; the next one comes at its time.
	Sweep = "sweep"
	// Upgrade is the check (and move) of one instance in an
	// upgrade, reported as failing.
	Upgrade = "upgrade"
	// HTTP is one HTTP request, answered with 500.
	HTTP = "http"
	// Metrics is the reading of the queue and the live cache when
	// the metrics are gathered: that scrape goes without them.
	Metrics = "metrics"
)

// maxPanicValue bounds the text of a panic's value that a failure and a log
// line keep: the value may quote what a guest supplied.
const maxPanicValue = 1 << 10

// Panic is a panic recovered at a boundary: its value, and the stack
// of the goroutine where it was raised.
type Panic struct {
	Value string
	Stack string
}

func (p *Panic) Error() string { return "panic: " + p.Value }

// Failure is the failure of what the panic ended, which what names ("the
// host panicked running its turn").
func (p *Panic) Failure(what string) *engine.Failure {
	return &engine.Failure{
		Message: fmt.Sprintf("%s (a bug in durabox, which went on serving everything else; the details hold the stack): %s", what, p),
		Details: p.Stack,
	}
}

// Guard recovers the panics at the host's boundaries.
type Guard struct {
	// Log gets a line for each panic, with its stack.
	Log *slog.Logger
	// Count, when set, counts a panic at boundary (durabox_panics_total).
	Count func(boundary string)
}

// Catch, deferred at a boundary, recovers a panic: it logs it with its
// stack and attrs, counts it, and hands it to then (nil: nothing more to
// do). A panic in then is recovered, logged and counted in its turn.
// http.ErrAbortHandler, which a handler raises to abort its answer on
// purpose, goes on up to net/http.
func (g Guard) Catch(boundary string, then func(*Panic), attrs ...any) {
	r := recover()
	if r == nil {
		return
	}
	if r == http.ErrAbortHandler {
		panic(r)
	}
	p := &Panic{Value: fmt.Sprint(r), Stack: string(debug.Stack())}
	if len(p.Value) > maxPanicValue {
		p.Value = p.Value[:maxPanicValue] + "…"
	}
	g.Log.Error("panic recovered; the host goes on", append([]any{"boundary", boundary, "panic", p.Value, "stack", p.Stack}, attrs...)...)
	if g.Count != nil {
		g.Count(boundary)
	}
	if then != nil {
		defer g.Catch(boundary, nil, attrs...)
		then(p)
	}
}

// Inject, set only by tests (host's export_test.go), is called at each
// point where the tests inject a panic, with that point and what is
// served there (an instance id, a module hash, a request's path).
var Inject atomic.Pointer[func(point, key string)]

// The points where the tests inject a panic.
const (
	PointTurn          = "turn"
	PointTurnCommitted = "turn committed"
	PointActivity      = "activity"
	PointActivityDone  = "activity recorded"
	PointLease         = "lease"
	PointFetch         = "fetch"
	PointModule        = "module"
	PointSweep         = "sweep"
	PointUpgrade       = "upgrade"
	PointHTTP          = "http"
	PointMetrics       = "metrics"
)

// MayPanic panics if a test asks it to at point, serving key.
func MayPanic(point, key string) {
	if f := Inject.Load(); f != nil {
		(*f)(point, key)
	}
}
