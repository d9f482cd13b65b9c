package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
)

// load drives the soak's three kinds of work through the API until its
// context is done, counting what it did.
type load struct {
	cl *client.Client
	c  *config
	wg sync.WaitGroup
	// hellos counts the Greeting instances started, missed the starts
	// the rate asked for that found every sender busy, approved the
	// Approval instances approved and ended.
	hellos, missed, approved atomic.Int64
	errs                     atomic.Int64
	mu                       sync.Mutex
	firstErr                 error
}

// helloSenders is how many requests the hello rate may have in flight.
const helloSenders = 32

// startLoad starts the load: the Heartbeat instances once, then hellos at
// their rate and the Approval instances in turn, until ctx is done.
func startLoad(ctx context.Context, cl *client.Client, c *config) (*load, error) {
	l := &load{cl: cl, c: c}
	for range c.eternals {
		if err := l.start(ctx, "Heartbeat", `{"round":0,"every":"1s"}`); err != nil {
			return nil, fmt.Errorf("start a Heartbeat: %w", err)
		}
	}
	jobs := make(chan struct{}, helloSenders)
	for range helloSenders {
		l.wg.Go(func() {
			for range jobs {
				l.count(&l.hellos, l.start(ctx, "Greeting", `"soak"`))
			}
		})
	}
	l.wg.Go(func() {
		defer close(jobs)
		t := time.NewTicker(time.Second / time.Duration(max(c.hellos, 1)))
		defer t.Stop()
		for c.hellos > 0 {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			select {
			case jobs <- struct{}{}:
			default:
				l.missed.Add(1)
			}
		}
	})
	for range c.approvals {
		l.wg.Go(func() {
			for ctx.Err() == nil {
				l.count(&l.approved, l.approve(ctx))
			}
		})
	}
	return l, nil
}

// start starts an instance of name with input.
func (l *load) start(ctx context.Context, name, input string) error {
	_, err := l.cl.Start(ctx, api.StartRequest{Name: name, Input: json.RawMessage(input)})
	return err
}

// approve starts an Approval instance whose timer outlives it, approves it
// after c.hold once it waits for its decision (an event raised before is
// dropped), and waits until it ends.
func (l *load) approve(ctx context.Context) error {
	id, err := l.cl.Start(ctx, api.StartRequest{Name: "Approval", Input: json.RawMessage(`{"item":"soak","timeout":"1h"}`)})
	if err != nil {
		return err
	}
	for wait := l.c.hold; ; wait = l.c.hold / 10 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		inst, err := l.cl.Instance(ctx, id)
		if err != nil {
			return err
		}
		if inst.CustomStatus != "" {
			break
		}
	}
	if err := l.cl.Raise(ctx, id, api.RaiseRequest{Name: "Approval", Data: json.RawMessage(`{"approved":true,"by":"soak"}`)}); err != nil {
		return err
	}
	inst, err := l.cl.Wait(ctx, id)
	if err == nil && inst.Status != "Completed" {
		err = fmt.Errorf("approval %s ended %s", id, inst.Status)
	}
	return err
}

// count counts a request's outcome in n, or its error; an error because
// the run ended is neither.
func (l *load) count(n *atomic.Int64, err error) {
	switch {
	case err == nil:
		n.Add(1)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
	default:
		l.errs.Add(1)
		l.mu.Lock()
		if l.firstErr == nil {
			l.firstErr = err
		}
		l.mu.Unlock()
	}
}

// wait waits until every request has ended.
func (l *load) wait() { l.wg.Wait() }
