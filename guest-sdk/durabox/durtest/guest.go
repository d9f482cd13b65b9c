package durtest

import (
	"fmt"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	// The SDK fills the seam when it starts.
	_ "github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/seam"
)

// guest is the SDK's runtime for one execution, run natively: what a wasm
// instance is on a host.
type guest struct {
	rt      seam.Guest
	timeout time.Duration
}

func (e *Env) newGuest() *guest { return newGuest(e.opts.StepTimeout) }

func newGuest(timeout time.Duration) *guest {
	return &guest{rt: seam.NewGuest(), timeout: timeout}
}

// turn runs a turn of x, which g applies alongside, on in: it answers
// every activation the engine asks for.
func (g *guest) turn(x *engine.Execution, in engine.TurnInput) (*engine.TurnResult, error) {
	t, err := x.Begin(in)
	if err != nil {
		return nil, err
	}
	for a := t.Next(); a != nil; a = t.Next() {
		t.AnswerResult(g.Activate(a))
	}
	return t.Result(), nil
}

// Activate runs one activation, for timeout at most. The orchestration's
// code runs on goroutines of the SDK's scheduler; one that never gives the
// turn back is left blocked, and the instance fails.
func (g *guest) Activate(a *abi.Activation) (*abi.ActivationResult, error) {
	res, ok := within(g.timeout, func() *abi.ActivationResult { return g.rt.Activate(a) })
	if !ok {
		return nil, fmt.Errorf("it ran past its %s deadline for one step: an endless loop, or a wait on something other than the SDK's futures (a channel, a lock, time.Sleep), which a host reports as a deadlock or a blocking sleep", g.timeout)
	}
	return res, nil
}

// Query answers a query, for timeout at most, as Activate runs a step.
func (g *guest) Query(req *abi.QueryRequest) (*abi.QueryResult, error) {
	res, ok := within(g.timeout, func() *abi.QueryResult { return g.rt.Query(req) })
	if !ok {
		return nil, fmt.Errorf("its handler ran past the %s deadline of one step: an endless loop, or a wait on a channel, a lock or time.Sleep", g.timeout)
	}
	return res, nil
}

// within runs f on a goroutine of its own and returns what it returns, or
// false once timeout has passed without an answer (f is left blocked).
func within[T any](timeout time.Duration, f func() T) (T, bool) {
	done := make(chan T, 1)
	go func() { done <- f() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case v := <-done:
		return v, true
	case <-timer.C:
		var zero T
		return zero, false
	}
}
