package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/serving"
)

// maxChildren is the largest backlog of children the backlog figures
// take: issue 35 asks for 10,000 (each child is an instance of its own,
// which the hello figures measure).
const maxChildren = 10000

// backlogKinds are the backlogs of one instance the backlog figures take:
// a fan-out of activities, of children, and events raised at it.
var backlogKinds = []struct {
	name, orchestration string
	// raise says that the items are events raised at the instance
	// through the API, 16 clients at once, once it has begun.
	raise bool
}{
	{name: "activities", orchestration: "FanOut"},
	{name: "children", orchestration: "Children"},
	{name: "events", orchestration: "Events", raise: true},
}

// backlog runs, for each of c.backlog's sizes, one instance with a backlog
// of that many activities, children and raised events, through the HTTP
// API, and reports the cost of an item (the time from the start to the
// wait's answer, over the size), how that cost compares with the first
// size's (issue 35 bounds it to 1.5 times), and the latency of an
// instance of one step started beside the backlog.
func backlog(c *config, _ float64) error {
	for _, kind := range backlogKinds {
		var first float64
		for _, n := range c.backlog {
			if kind.name == "children" && n > maxChildren {
				continue
			}
			perItem, beside, err := backlogOf(c, kind.name, kind.orchestration, kind.raise, n)
			if err != nil {
				return fmt.Errorf("%s %d: %w", kind.name, n, err)
			}
			name := fmt.Sprintf("backlog_%s_%d", kind.name, n)
			report(name+"_per_item", us(perItem), "us")
			report(name+"_hello_beside", ms(beside), "ms")
			if first == 0 {
				first = float64(perItem)
			} else {
				report(name+"_growth", float64(perItem)/first, "x")
			}
		}
	}
	return nil
}

// backlogOf runs one instance of orchestration with a backlog of n items
// (raised at it when raise is set) on a fresh host, and returns the cost
// of an item and the latency of a Sequential(1) started beside it once it
// has begun.
func backlogOf(c *config, kind, orchestration string, raise bool, n int) (perItem, beside time.Duration, err error) {
	b, err := newBench(c, fmt.Sprintf("backlog-%s-%d", kind, n), c.benchModule, serving.Config{})
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cerr := b.close(); err == nil {
			err = cerr
		}
	}()
	// The module's first instance compiles it: not in the figures.
	if _, err := b.runOne("Sequential", "warm-up", 1, 0); err != nil {
		return 0, 0, err
	}
	ctx := context.Background()
	id := "backlog"
	in, _ := json.Marshal(n)
	began := time.Now()
	if _, err := b.c.Start(ctx, api.StartRequest{Name: orchestration, Input: in, ID: id}); err != nil {
		return 0, 0, err
	}
	for {
		inst, err := b.h.Instance(ctx, id)
		if err != nil {
			return 0, 0, err
		}
		if inst.Status != engine.StatusPending {
			break
		}
		time.Sleep(time.Millisecond)
	}
	besideDone := make(chan error, 1)
	go func() {
		var err error
		beside, err = b.runOne("Sequential", "beside", 1, 0)
		besideDone <- err
	}()
	if raise {
		if err := each(n, func(i int) error {
			return b.c.Raise(ctx, id, api.RaiseRequest{Name: "E", Data: json.RawMessage(fmt.Sprint(i))})
		}); err != nil {
			return 0, 0, err
		}
	}
	inst, err := b.c.Wait(ctx, id)
	if err == nil {
		err = check(inst.ID, inst.Status, inst.Result, n*(n-1)/2)
	}
	took := time.Since(began)
	if berr := <-besideDone; err == nil {
		err = berr
	}
	return took / time.Duration(n), beside, err
}
