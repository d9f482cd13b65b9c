package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/host/client"
)

// driver plays the workload's clients: it starts the
// planned instances a few per host (so that starts are spread over all the
// kills, and work is in flight at each), and approves each Approval instance once it waits for a decision.
// Every request may fail because the host was killed under it; the driver
// repeats it against the next host until it is acknowledged. Repeating is
// safe: a start with an id is idempotent, and a second approval finds no
// wait and is dropped by the engine's rules.
type driver struct {
	planned map[string]*expect
	wasm    [][]byte
	// toStart are the ids not started yet, in start order.
	toStart []string
	// perHost is how many instances to start on one host; left is how many
	// the current host may still start.
	perHost, left int
	// approved are the Approval instances whose approval was acknowledged.
	approved map[string]bool
}

// newDriver plans to start every planned instance over hosts hosts.
func newDriver(planned map[string]*expect, wasm [][]byte, hosts int) *driver {
	d := &driver{planned: planned, wasm: wasm, approved: map[string]bool{}}
	for id := range planned {
		d.toStart = append(d.toStart, id)
	}
	// Shuffled by a fixed rule, so that kinds mix on every host.
	slices.SortFunc(d.toStart, func(a, b string) int { return cmp.Compare(reverse(a), reverse(b)) })
	d.perHost = (len(d.toStart) + hosts - 1) / hosts
	return d
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// drive works against one host until ctx ends (the host is about to be
// killed) or everything is started and approved.
func (d *driver) drive(ctx context.Context, c *client.Client) {
	d.left = d.perHost
	for ctx.Err() == nil && !d.done() {
		if err := d.round(ctx, c); err != nil {
			// The host is gone, or going: wait for the next one.
			return
		}
		sleep(ctx, 20*time.Millisecond)
	}
}

func (d *driver) done() bool {
	return len(d.toStart) == 0 && len(d.approved) == d.approvals()
}

func (d *driver) approvals() int {
	n := 0
	for _, e := range d.planned {
		if e.approve {
			n++
		}
	}
	return n
}

// deploy deploys the modules.
func (d *driver) deploy(ctx context.Context, c *client.Client) error {
	for _, wasm := range d.wasm {
		if _, err := c.Deploy(ctx, wasm, nil); err != nil {
			return err
		}
	}
	return nil
}

// round starts the next few instances and approves the Approval instances
// that wait.
func (d *driver) round(ctx context.Context, c *client.Client) error {
	for d.left > 0 && len(d.toStart) > 0 {
		id := d.toStart[0]
		e := d.planned[id]
		input, _ := json.Marshal(e.input)
		_, err := c.Start(ctx, client.StartRequest{Name: e.name, Input: input, ID: id})
		var refused *client.Error
		if errors.As(err, &refused) && refused.StatusCode == http.StatusConflict {
			err = nil // started before a kill cut off the answer
		}
		if err != nil {
			return err
		}
		d.toStart, d.left = d.toStart[1:], d.left-1
	}
	for id, e := range d.planned {
		if !e.approve || d.approved[id] || slices.Contains(d.toStart, id) {
			continue
		}
		inst, err := c.Instance(ctx, id)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(inst.CustomStatus, "waiting for a decision") || inst.Status.IsTerminal() {
			continue
		}
		if err := c.Raise(ctx, id, client.RaiseRequest{Name: "Approval", Data: json.RawMessage(`{"approved": true, "by": "crashtest"}`)}); err != nil {
			return err
		}
		d.approved[id] = true
	}
	return nil
}

// finish drives the last host until every instance it knows of, children
// included, has finished, or ctx ends.
func (d *driver) finish(ctx context.Context, c *client.Client) error {
	d.left = len(d.toStart)
	for {
		var state error
		if !d.done() {
			if state = d.round(ctx, c); state == nil {
				state = fmt.Errorf("%d instances not started, %d of %d approvals not made", len(d.toStart), d.approvals()-len(d.approved), d.approvals())
			}
		} else {
			running, err := unfinished(ctx, c)
			if err == nil && len(running) == 0 {
				return nil
			}
			state = cmp.Or(err, fmt.Errorf("still running: %s", strings.Join(running, ", ")))
		}
		if sleep(ctx, 50*time.Millisecond) != nil {
			return state
		}
	}
}

// unfinished lists the instances that have not finished.
func unfinished(ctx context.Context, c *client.Client) ([]string, error) {
	all, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	var running []string
	for _, inst := range all {
		if !inst.Status.IsTerminal() {
			running = append(running, inst.ID+" ("+string(inst.Status)+")")
		}
	}
	return running, nil
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
