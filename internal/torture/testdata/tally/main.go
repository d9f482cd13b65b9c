// Command tally is the torture test's own module: an orchestration whose
// activities report every run, so that the test can see how many times
// each one really ran; and two that signal each other, Relay raising at
// Collector, so that the test sees each event delivered once. Mark prints its key and delivery number (the host
// logs what an activity prints, as it prints it) and then works for a
// while, which is when a kill makes it run again.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Tally", Tally)
	durabox.RegisterOrchestration("Relay", Relay)
	durabox.RegisterOrchestration("Collector", Collector)
	durabox.RegisterActivity("Mark", Mark)
}

// Job is Tally's input.
type Job struct {
	// Keys name the activities to run at once; one more, Keys[0]+"/last",
	// runs after Pause.
	Keys []string `json:"keys"`
	// Pause is the durable sleep between the two steps, as a Go duration.
	Pause string `json:"pause"`
	// WorkMillis is how long each Mark works after reporting.
	WorkMillis int `json:"workMillis"`
}

// Run is Mark's input.
type Run struct {
	Key        string `json:"key"`
	WorkMillis int    `json:"workMillis"`
}

// Tally runs a Mark per key at once, sleeps, runs one more, and returns
// how many ran.
func Tally(ctx *durabox.Context, job Job) (int, error) {
	pause, err := time.ParseDuration(job.Pause)
	if err != nil {
		return 0, fmt.Errorf("pause %q is not a duration such as 100ms", job.Pause)
	}
	var runs []*durabox.Future
	for _, k := range job.Keys {
		runs = append(runs, ctx.CallActivity("Mark", Run{Key: k, WorkMillis: job.WorkMillis}))
	}
	if _, err := durabox.All[string](runs...); err != nil {
		return 0, err
	}
	if err := ctx.Sleep(pause); err != nil {
		return 0, err
	}
	if _, err := durabox.Call[string](ctx, "Mark", Run{Key: job.Keys[0] + "/last", WorkMillis: job.WorkMillis}); err != nil {
		return 0, err
	}
	return len(job.Keys) + 1, nil
}

// Mark reports that it runs, with its delivery number, then works.
func Mark(ctx context.Context, r Run) (string, error) {
	delivery := 0
	if info, ok := durabox.ActivityInfoFrom(ctx); ok {
		delivery = info.Attempt
	}
	fmt.Printf("mark %s delivery %d\n", r.Key, delivery)
	time.Sleep(time.Duration(r.WorkMillis) * time.Millisecond)
	return r.Key, nil
}

func main() {}

// Hops is Relay's input: start a Collector of N events as the instance To
// (detached: the relay does not wait for it), then raise N persistent
// events "hop" at it, with data 1 to N, one after another, each once the
// host says the last was delivered.
type Hops struct {
	To string `json:"to"`
	N  int    `json:"n"`
}

// Relay starts its Collector, raises its hops and returns how many were
// delivered.
func Relay(ctx *durabox.Context, h Hops) (int, error) {
	if err := ctx.StartDetached("Collector", h.N, h.To); err != nil {
		return 0, err
	}
	delivered := 0
	for i := 1; i <= h.N; i++ {
		if err := ctx.Raise(h.To, "hop", i, true).Get(nil); err == nil {
			delivered++
		}
	}
	return delivered, nil
}

// Collector takes n persistent events "hop" and returns the sum of their
// data.
func Collector(ctx *durabox.Context, n int) (int, error) {
	sum := 0
	for range n {
		var v int
		if err := ctx.WaitEventPersistent("hop").Get(&v); err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}
