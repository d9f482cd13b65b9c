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
		t.Answer(g.Activate(a))
	}
	return t.Result(), nil
}

// Activate runs one activation, for timeout at most. The orchestration's
// code runs on goroutines of the SDK's scheduler; one that never gives the
// turn back is left blocked, and the instance fails.
func (g *guest) Activate(a *abi.Activation) ([]abi.Command, error) {
	done := make(chan []abi.Command, 1)
	go func() { done <- g.rt.Activate(a) }()
	timer := time.NewTimer(g.timeout)
	defer timer.Stop()
	select {
	case cmds := <-done:
		return cmds, nil
	case <-timer.C:
		return nil, fmt.Errorf("it ran past its %s deadline for one step: an endless loop, or a wait on something other than the SDK's futures (a channel, a lock, time.Sleep), which a host reports as a deadlock or a blocking sleep", g.timeout)
	}
}

// Query answers a query, for timeout at most, as Activate runs a step.
func (g *guest) Query(req *abi.QueryRequest) (*abi.QueryResult, error) {
	done := make(chan *abi.QueryResult, 1)
	go func() { done <- g.rt.Query(req) }()
	timer := time.NewTimer(g.timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		return res, nil
	case <-timer.C:
		return nil, fmt.Errorf("its handler ran past the %s deadline of one step: an endless loop, or a wait on a channel, a lock or time.Sleep", g.timeout)
	}
}
