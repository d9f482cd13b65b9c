package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"

	"github.com/durabox/durabox/host/api"
)

var resetCommand = &command{
	name:     "reset",
	synopsis: "ID --to-event N [--module HASH] [--dry-run]",
	summary:  "run an instance again from an event of its history, on new code",
	about: "Start a new execution of the instance ID that keeps its current execution's\n" +
		"history up to event N and goes on from there on the module HASH (or a unique\n" +
		"prefix; default its own): typically code patched after a bug, and often for a\n" +
		"failed instance. First it prints what the reset keeps and discards, the\n" +
		"activities that had finished after event N and will run again, the events\n" +
		"raised again, and what the new code does first, with a warning for a child it\n" +
		"starts whose id an instance has already (one the code chose: the ids the host\n" +
		"derives are new in every execution); with --dry-run it stops there. The reset\n" +
		"is refused if the module does not replay the events kept, or if the instance\n" +
		"changed since the plan was printed. The old execution's history stays\n" +
		"(durabox history ID --execution N).",
	args:   []string{"ID"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var toEvent int64
		wholeVar(fs, &toEvent, "to-event", 0, span{min: 1, max: math.MaxInt64, note: "the last event to keep: durabox history ID numbers them"}, "keep the events up to `N` (required)")
		module := fs.String("module", "", "go on with the module `HASH`, or a unique prefix (default: the instance's)")
		dryRun := fs.Bool("dry-run", false, "print the plan, and change nothing")
		return func(ctx context.Context, e *env) error {
			if toEvent == 0 {
				return usagef("--to-event N is required: the last event to keep, from 1")
			}
			return reset(ctx, e, api.ResetRequest{ToEvent: toEvent, Module: *module}, *dryRun)
		}
	},
}

func reset(ctx context.Context, e *env, req api.ResetRequest, dryRun bool) error {
	req.DryRun = true
	plan, err := e.client.Reset(ctx, e.args[0], req)
	if err != nil {
		return err
	}
	if !e.json {
		printPlan(e, plan)
	}
	if !dryRun {
		// The reset happens only if the instance is still as planned.
		req.DryRun, req.Execution, req.Events = false, plan.Execution, plan.Events
		if plan, err = e.client.Reset(ctx, e.args[0], req); err != nil {
			return err
		}
	}
	if e.json {
		return printJSON(e.stdout, plan)
	}
	if dryRun {
		_, err = fmt.Fprintln(e.stdout, "dry run: nothing changed.")
	} else {
		_, err = fmt.Fprintf(e.stdout, "reset: instance %s goes on in execution %d, on module %s.\n", plan.InstanceID, plan.Execution+1, shortHash(plan.Module))
	}
	return err
}

// printPlan prints what a reset keeps, discards and does again.
func printPlan(e *env, p api.ResetPlan) {
	w := e.stdout
	on := "module " + shortHash(p.Module)
	if p.Module != p.FromModule {
		on += ", moving from " + shortHash(p.FromModule)
	}
	fmt.Fprintf(w, "reset %s, execution %d (%s), to event %d, on %s\n", p.InstanceID, p.Execution, counted(p.Events, "event"), p.ToEvent, on)
	fmt.Fprintf(w, "keep: events 1 to %d\n", p.ToEvent)
	if len(p.Discarded) == 0 {
		fmt.Fprintln(w, "discard: nothing")
	} else {
		fmt.Fprintf(w, "discard: events %d to %d\n", p.Discarded[0].ID, p.Discarded[len(p.Discarded)-1].ID)
		for _, ev := range p.Discarded {
			fmt.Fprintf(w, "  %d  %s\n", ev.ID, ev.String())
		}
	}
	if len(p.RunAgain) > 0 {
		fmt.Fprintf(w, "warning: %s finished after event %d and will run again:\n", counted(len(p.RunAgain), "activity"), p.ToEvent)
		for _, r := range p.RunAgain {
			again := ""
			if r.IfCalled {
				again = " (if the code calls it again)"
			}
			fmt.Fprintf(w, "  %s(%s), scheduled at event %d, %s at event %d%s\n", r.Name, jsonText(r.Input), r.Scheduled, r.Outcome, r.Completed, again)
		}
	}
	for _, ev := range p.Raise {
		fmt.Fprintf(w, "raised again: %s\n", ev.String())
	}
	if len(p.Detached) > 0 {
		fmt.Fprintf(w, "children started after event %d go on, reporting to nobody: %s\n", p.ToEvent, strings.Join(p.Detached, ", "))
	}
	for _, id := range p.Taken {
		fmt.Fprintf(w, "warning: instance id %q is taken: the new execution cannot start that child, which will fail with \"instance id … is already taken\"\n", id)
	}
	fmt.Fprintln(w, "the new execution goes on with:")
	for _, ev := range p.Next {
		fmt.Fprintf(w, "  %d  %s\n", ev.ID, ev.String())
	}
}
