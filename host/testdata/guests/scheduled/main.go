// Command scheduled holds the orchestrations of the schedule tests: each
// run counts on from the last run's result (ctx.LastRun), and can be held
// running until an event comes, or fail.
package main

import (
	"errors"
	"fmt"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// Plan is the input of Count.
type Plan struct {
	// Hold keeps the run running until the event "go" comes.
	Hold bool `json:"hold"`
	// Fail fails the run whose count is Fail.
	Fail int `json:"fail"`
}

// Result is what a run of Count returns: its count (the last run's, plus
// one), and what it was told of the last run.
type Result struct {
	Count int    `json:"count"`
	Last  string `json:"last"`
}

func init() {
	durabox.RegisterOrchestration("Count", func(ctx *durabox.Context, plan Plan) (Result, error) {
		var last Result
		ok, err := ctx.LastRun(&last)
		var failed *durabox.LastRunError
		r := Result{Last: "none"}
		switch {
		case errors.As(err, &failed):
			r.Last = "failed: " + failed.Message
		case err != nil:
			return r, err
		case ok:
			r.Count, r.Last = last.Count, fmt.Sprintf("count %d", last.Count)
		}
		r.Count++
		if plan.Hold {
			if _, err := durabox.Await[any](ctx.WaitEventPersistent("go")); err != nil {
				return r, err
			}
		}
		if r.Count == plan.Fail {
			return r, fmt.Errorf("run %d fails", r.Count)
		}
		return r, nil
	})
}

func main() {}
