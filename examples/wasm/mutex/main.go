// Command mutex is a lock that orchestration instances take in turn. The
// orchestration Lock holds it and grants it to one asker at a time, in the
// order they asked; each Worker asks for it, does its work while it holds
// it, and gives it back. They talk by persistent events, which each raises
// at the other with ctx.Raise.
package main

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Lock", Lock)
	durabox.RegisterOrchestration("Worker", Worker)
	durabox.RegisterActivity("Work", Work)
}

// PerExecution is how many askers one execution of Lock serves before it
// continues as new: each takes two persistent events (its acquire and its
// release), and an execution takes at most 20.
const PerExecution = 8

// Lock grants the lock to the instances that ask for it with the
// persistent event "acquire" (its data the asker's id), one at a time, in
// the order they asked: it raises "granted" on the holder and waits for
// its "release:ID" before the next. Each asker is served by a branch that
// takes a durabox.Mutex, which grants in the order the branches asked.
// served counts the askers served by earlier executions.
func Lock(ctx *durabox.Context, served int) (int, error) {
	var m durabox.Mutex
	serving := 0
	for range PerExecution {
		asker, err := durabox.Await[string](ctx.WaitEventPersistent("acquire"))
		if err != nil {
			return served, err
		}
		serving++
		ctx.Go(func(ctx *durabox.Context) {
			defer func() { serving-- }()
			if m.Lock(ctx) != nil {
				return
			}
			defer m.Unlock()
			ctx.SetCustomStatus("held by " + asker)
			if ctx.Raise(asker, "granted", nil, true).Get(nil) != nil {
				return
			}
			if ctx.WaitEventPersistent("release:"+asker).Get(nil) == nil {
				served++
			}
		})
	}
	// Askers who ask meanwhile wait in the mailbox, which continue-as-new
	// carries over.
	if err := ctx.Await(func() bool { return serving == 0 }); err != nil {
		return served, err
	}
	ctx.SetCustomStatus(fmt.Sprintf("free, %d served", served))
	return served, ctx.ContinueAsNew(served)
}

// Job is a Worker's input: the id of the Lock instance, and the work to do
// while holding it.
type Job struct {
	Lock string `json:"lock"`
	Work string `json:"work"`
}

// Worker takes the lock, does its work while it holds it, and gives it
// back.
func Worker(ctx *durabox.Context, job Job) (string, error) {
	me := ctx.InstanceID()
	if err := ctx.Raise(job.Lock, "acquire", me, true).Get(nil); err != nil {
		return "", err
	}
	if err := ctx.WaitEventPersistent("granted").Get(nil); err != nil {
		return "", err
	}
	out, err := durabox.Call[string](ctx, "Work", job.Work)
	if release := ctx.Raise(job.Lock, "release:"+me, nil, true).Get(nil); release != nil {
		return "", release
	}
	return out, err
}

// Work is what a Worker does while it holds the lock; here it says what it
// did.
func Work(_ context.Context, work string) (string, error) { return "did " + work, nil }

func main() {}
