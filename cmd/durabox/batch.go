package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
)

var batchCommand = &command{
	name:     "batch",
	synopsis: "cancel|terminate|raise|reset|upgrade|list|show|stop [ID] [flags]",
	summary:  "act on every instance a filter selects: cancel, terminate, raise, reset, upgrade",
	about: "Start a batch: the action on every instance the filter flags select now (those\n" +
		"of durabox list; at least one), each through the same code as the command for\n" +
		"one instance, so each history names your token. --dry-run prints how many and\n" +
		"which, and starts nothing. The host keeps the batch with the ids it selected\n" +
		"and takes them in the order of their ids, at most --rate a second, recording\n" +
		"each: after a restart, or on another host, it goes on after the last recorded.\n" +
		"cancel and terminate take --reason; raise takes --event NAME (required),\n" +
		"--data and --persistent; reset takes --to last-failure, start or an event's\n" +
		"number (required), and --on-module HASH to go on with; upgrade takes --to HASH\n" +
		"(required), the module to move each instance to if it replays its history.\n" +
		"--wait prints the batch's progress until it ends.\n\n" +
		"list shows the newest batches; show, one with its progress and failures; stop\n" +
		"stops a running batch (what it changed stays changed). docs/batches.md.",
	args:     []string{"ACTION|list|show|stop"},
	optional: []string{"ID"},
	client:   true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var filter filterFlags
		filter.define(fs)
		var stalledFor time.Duration
		durationVar(fs, &stalledFor, "stalled-for", "", "only instances not finished that no turn changed for `D` or longer, such as 10m (by the host's clock)")
		var waiting waitKindFlag
		fs.Var(&waiting, "waiting-on", "only instances not finished that wait on `KIND` (activity, timer, event, update, child); repeat it, or separate with commas")
		var req api.BatchRequest
		fs.BoolVar(&req.DryRun, "dry-run", false, "print how many instances the flags select and which, and start nothing")
		fs.Float64Var(&req.Rate, "rate", 0, "take at most `N` instances a second (default: no limit)")
		fs.StringVar(&req.Reason, "reason", "", "cancel, terminate: the reason, in `TEXT`")
		fs.StringVar(&req.Event, "event", "", "raise: the event `NAME` (required)")
		data := fs.String("data", "", "raise: the event's data, as `JSON`; - reads it from stdin (default null)")
		dataFile := fs.String("data-file", "", "raise: read the event's data, as JSON, from `FILE`")
		fs.BoolVar(&req.Persistent, "persistent", false, "raise: the event waits in each instance's mailbox until taken")
		to := fs.String("to", "", "reset: the point `POINT`, last-failure, start or an event's number; upgrade: the module's hash, or a unique prefix")
		onModule := fs.String("on-module", "", "reset: go on with the module `HASH`, or a unique prefix (default: each instance's own)")
		wait := fs.Bool("wait", false, "wait until the batch ends, printing its progress")
		return func(ctx context.Context, e *env) error {
			op := e.args[0]
			switch op {
			case "list":
				if len(e.args) > 1 {
					return usagef("list takes no ID")
				}
				return listBatches(ctx, e)
			case "show", "stop":
				if len(e.args) < 2 {
					return usagef("missing ID: say which batch to %s (durabox batch list shows them)", op)
				}
				id, err := strconv.ParseInt(e.args[1], 10, 64)
				if err != nil || id < 1 {
					return usagef("%q is not a batch's id, a number from 1 (durabox batch list shows them)", e.args[1])
				}
				if op == "show" {
					return e.showBatch(e.client.Batch(ctx, id))
				}
				return e.showBatch(e.client.StopBatch(ctx, id))
			}
			if !slices.Contains(api.BatchActions(), op) {
				return usagef("%q is not one of %s, list, show, stop", op, strings.Join(api.BatchActions(), ", "))
			}
			if len(e.args) > 1 {
				return usagef("a batch takes no ID: say which instances with the flags of durabox list, such as --where")
			}
			if !filter.set() && stalledFor == 0 && len(waiting) == 0 {
				return usagef("say which instances the batch takes, with the flags of durabox list, such as --where 'customer = \"c-42\"'")
			}
			req.Action = op
			if *data != "" || *dataFile != "" {
				in, err := payload(e, fs, "data", *data, "data-file", *dataFile)
				if err != nil {
					return err
				}
				req.Data = in
			}
			switch op {
			case api.BatchReset:
				req.ResetTo, req.Module = *to, *onModule
			case api.BatchUpgrade:
				req.Module = *to
				if *onModule != "" {
					return usagef("--on-module is for batch reset; an upgrade's module is --to")
				}
			default:
				if *to != "" || *onModule != "" {
					return usagef("--to and --on-module are for batch reset and upgrade")
				}
			}
			cf, err := filter.filter(ctx, e)
			if err != nil {
				return err
			}
			f := client.BatchFilter{Filter: cf, StalledFor: stalledFor, WaitingOn: waiting}
			if req.DryRun {
				return dryRunBatch(ctx, e, f, req)
			}
			b, err := e.client.StartBatch(ctx, f, req)
			if err != nil {
				return err
			}
			if *wait {
				return e.awaitBatch(ctx, b)
			}
			return e.showBatch(b, nil)
		}
	},
}

func dryRunBatch(ctx context.Context, e *env, f client.BatchFilter, req api.BatchRequest) error {
	d, err := e.client.DryRunBatch(ctx, f, req)
	if err != nil || e.json {
		return printOr(e, d, err)
	}
	fmt.Fprintf(e.stdout, "%s of %s would be taken (a dry run: nothing changed):\n", req.Action, instancesText(d.Matched))
	for _, id := range d.IDs {
		fmt.Fprintln(e.stdout, "  "+id)
	}
	if more := d.Matched - len(d.IDs); more > 0 {
		fmt.Fprintf(e.stdout, "  and %d more\n", more)
	}
	return nil
}

func listBatches(ctx context.Context, e *env) error {
	all, err := e.client.Batches(ctx)
	if err != nil || e.json {
		return printOr(e, api.BatchList{Batches: all}, err)
	}
	if len(all) == 0 {
		_, err := fmt.Fprintln(e.stdout, "no batches; start one with `durabox batch cancel --where EXPR`")
		return err
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "ID\tACTION\tSTATE\tMATCHED\tDONE\tFAILED\tSKIPPED\tBY\tCREATED\tFILTER")
	for _, b := range all {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", b.ID, b.Action, b.State, b.Matched, b.Done, b.Failed, b.Skipped,
			orNone(b.By), timeText(b.CreatedAt), filterText(b.Filter))
	}
	return tw.Flush()
}

// filterText shows a batch's filter, a query, for people: its values
// unescaped.
func filterText(filter string) string {
	q, err := url.ParseQuery(filter)
	if err != nil {
		return filter
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(q)) {
		for _, v := range q[k] {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// batchProgress says how far a batch is.
func batchProgress(b api.Batch) string {
	return fmt.Sprintf("%d of %d taken: %d done, %d failed, %d skipped", b.Done+b.Failed+b.Skipped, b.Matched, b.Done, b.Failed, b.Skipped)
}

// showBatch prints a batch, unless err.
func (e *env) showBatch(b api.Batch, err error) error {
	if err != nil || e.json {
		return printOr(e, b, err)
	}
	tw := newTable(e.stdout)
	fmt.Fprintf(tw, "batch\t%d\n", b.ID)
	what := b.Action
	switch b.Action {
	case api.BatchCancel, api.BatchTerminate:
		if b.Request.Reason != "" {
			what += ", reason " + strconv.Quote(b.Request.Reason)
		}
	case api.BatchRaise:
		what += " " + b.Request.Event + " " + jsonText(b.Request.Data)
		if b.Request.Persistent {
			what += " (persistent)"
		}
	case api.BatchReset:
		what += " to " + b.Request.ResetTo
		if b.Request.Module != "" {
			what += ", on module " + shortHash(b.Request.Module)
		}
	case api.BatchUpgrade:
		what += " to module " + shortHash(b.Request.Module)
	}
	fmt.Fprintf(tw, "action\t%s\n", what)
	fmt.Fprintf(tw, "filter\t%s\n", filterText(b.Filter))
	if b.By != "" {
		fmt.Fprintf(tw, "by\t%s\n", b.By)
	}
	rate := "no limit"
	if b.Request.Rate > 0 {
		rate = strconv.FormatFloat(b.Request.Rate, 'g', -1, 64) + " a second"
	}
	fmt.Fprintf(tw, "rate\t%s\n", rate)
	fmt.Fprintf(tw, "state\t%s\n", b.State)
	fmt.Fprintf(tw, "progress\t%s\n", batchProgress(b))
	if b.LastInstance != "" {
		fmt.Fprintf(tw, "last instance\t%s\n", b.LastInstance)
	}
	fmt.Fprintf(tw, "created\t%s\n", timeText(b.CreatedAt))
	for i, f := range b.Failures {
		label := ""
		if i == 0 {
			label = "failures"
		}
		fmt.Fprintf(tw, "%s\t%s: %s\n", label, f.InstanceID, f.Error)
	}
	if len(b.Failures) == 0 && b.LastError != "" {
		fmt.Fprintf(tw, "last error\t%s\n", b.LastError)
	}
	return tw.Flush()
}

// batchPoll is how often --wait asks for the batch's progress.
const batchPoll = time.Second

// awaitBatch prints b's progress, a line whenever it changed, until it
// ends, then the batch.
func (e *env) awaitBatch(ctx context.Context, b api.Batch) error {
	last := ""
	for {
		if line := batchProgress(b); line != last && !e.json {
			fmt.Fprintf(e.stdout, "batch %d: %s\n", b.ID, line)
			last = line
		}
		if b.State != "running" {
			return e.showBatch(b, nil)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(batchPoll):
		}
		var err error
		if b, err = e.client.Batch(ctx, b.ID); err != nil {
			return err
		}
	}
}
