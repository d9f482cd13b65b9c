package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/host/api"
)

var scheduleCommand = &command{
	name:     "schedule",
	synopsis: "create|list|show|pause|resume|trigger|delete [NAME] [flags]",
	summary:  "run an orchestration on a schedule",
	about: "Manage schedules: each starts the orchestration ORCH at each of its slots, the\n" +
		"times a cron expression names (--cron '*/5 * * * *', five fields, or @hourly,\n" +
		"@daily, ...; read in --timezone, such as Europe/Paris, default UTC) or the\n" +
		"multiples of an interval since the Unix epoch (--every 10m). Each run is an\n" +
		"instance NAME:SLOT (nightly:2026-11-27T03:00:00Z), started once per slot\n" +
		"whatever the hosts and their restarts, and handed the last run's result or\n" +
		"failure (ctx.LastRun). --overlap says what a slot does while the last run\n" +
		"runs: skip it (the default), buffer-one (start it when the run ends; one at\n" +
		"most), allow-all, or cancel-other (cancel the run, then start). After\n" +
		"downtime, the slots within --catchup-window (default 1h) fire once each, in\n" +
		"order; older ones are counted as missed. --jitter delays each slot's start by\n" +
		"up to D, the same on every host.\n\n" +
		"list shows every schedule and its next run; show, one with its next runs and\n" +
		"its last runs; pause (--note why) stops its slots until resume, which goes on\n" +
		"from the next slot; trigger starts a run now, whatever the slots and the\n" +
		"overlap policy say; delete removes it (its runs' instances stay).",
	args:     []string{"create|list|show|pause|resume|trigger|delete"},
	optional: []string{"NAME"},
	client:   true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var req api.ScheduleRequest
		fs.StringVar(&req.Cron, "cron", "", "create: fire at the times of the cron expression `EXPR` (five fields, or @hourly, @daily, ...)")
		fs.StringVar(&req.Timezone, "timezone", "", "create: read --cron in the time zone `TZ`, such as Europe/Paris (default UTC)")
		fs.StringVar(&req.Every, "every", "", "create: fire every `D`, such as 10m, at its multiples since the Unix epoch")
		fs.StringVar(&req.Orchestration, "start", "", "create: the orchestration `ORCH` each run starts")
		fs.StringVar(&req.Module, "module", "", "create: start the runs on the module `HASH`, or a unique prefix (default: the newest that registers ORCH when each run starts)")
		input := fs.String("input", "null", "create: each run's input, as `JSON`; - reads it from stdin (default null)")
		inputFile := fs.String("input-file", "", "create: read each run's input, as JSON, from `FILE`")
		fs.StringVar(&req.Overlap, "overlap", "skip", "create: what a slot does while the last run runs: `POLICY` skip, buffer-one, allow-all or cancel-other")
		fs.StringVar(&req.CatchupWindow, "catchup-window", "1h", "create: after downtime, fire the slots missed within `D`; count older ones as missed")
		fs.StringVar(&req.Jitter, "jitter", "", "create: delay each slot's start by up to `D`, the same on every host (default none)")
		fs.BoolVar(&req.Paused, "paused", false, "create: create it paused")
		note := fs.String("note", "", "create --paused, pause: say why, in `TEXT`")
		return func(ctx context.Context, e *env) error {
			op := e.args[0]
			if err := onlyFlags(fs, op); err != nil {
				return err
			}
			if op == "list" {
				if len(e.args) > 1 {
					return usagef("list takes no NAME")
				}
				return listSchedules(ctx, e)
			}
			if !slices.Contains([]string{"create", "show", "pause", "resume", "trigger", "delete"}, op) {
				return usagef("%q is not one of create, list, show, pause, resume, trigger, delete", op)
			}
			if len(e.args) < 2 {
				return usagef("missing NAME: say which schedule to %s", op)
			}
			name := e.args[1]
			switch op {
			case "create":
				in, err := payload(e, fs, "input", *input, "input-file", *inputFile)
				if err != nil {
					return err
				}
				req.Name, req.Input, req.Note = name, in, *note
				if req.Orchestration == "" {
					return usagef("--start is missing: say which orchestration each run starts")
				}
				return e.showSchedule(e.client.CreateSchedule(ctx, req))
			case "show":
				return e.showSchedule(e.client.Schedule(ctx, name))
			case "pause":
				return e.showSchedule(e.client.PauseSchedule(ctx, name, *note))
			case "resume":
				return e.showSchedule(e.client.ResumeSchedule(ctx, name))
			case "delete":
				sc, err := e.client.DeleteSchedule(ctx, name)
				if err != nil || e.json {
					return printOr(e, sc, err)
				}
				_, err = fmt.Fprintf(e.stdout, "deleted schedule %s (its %d runs' instances stay)\n", sc.Name, sc.Started)
				return err
			}
			run, err := e.client.TriggerSchedule(ctx, name)
			if err != nil || e.json {
				return printOr(e, run, err)
			}
			tw := newTable(e.stdout)
			showRun(tw, run)
			return tw.Flush()
		}
	},
}

// onlyFlags refuses the flags of create (their usage begins "create") given
// to another of the schedule command's operations (op).
func onlyFlags(fs *flag.FlagSet, op string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case err != nil, strings.HasPrefix(f.Usage, op+":"), f.Name == "note" && (op == "create" || op == "pause"):
		case strings.HasPrefix(f.Usage, "create"):
			err = usagef("--%s is for schedule create", f.Name)
		}
	})
	return err
}

// printOr prints v as JSON, unless err.
func printOr(e *env, v any, err error) error {
	if err != nil {
		return err
	}
	return printJSON(e.stdout, v)
}

func listSchedules(ctx context.Context, e *env) error {
	all, err := e.client.Schedules(ctx)
	if err != nil || e.json {
		return printOr(e, api.ScheduleList{Schedules: all}, err)
	}
	if len(all) == 0 {
		_, err := fmt.Fprintln(e.stdout, "no schedules; create one with `durabox schedule create NAME --cron EXPR --start ORCH`")
		return err
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "NAME\tWHEN\tSTARTS\tOVERLAP\tNEXT RUN\tLAST RUN\tSTARTED\tSKIPPED\tMISSED")
	for _, sc := range all {
		next := "none"
		switch {
		case sc.Paused:
			next = "paused"
		case len(sc.NextRuns) > 0:
			next = timeText(sc.NextRuns[0])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n", sc.Name, when(sc), sc.Orchestration, sc.Overlap, next,
			orNone(sc.LastInstance), sc.Started, sc.Skipped, sc.Missed)
	}
	return tw.Flush()
}

// when shows a schedule's slots.
func when(sc api.Schedule) string {
	switch {
	case sc.Every != "":
		return "every " + sc.Every
	case sc.Timezone != "":
		return sc.Cron + " (" + sc.Timezone + ")"
	}
	return sc.Cron
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// showSchedule prints a schedule, with its next and last runs, unless err.
func (e *env) showSchedule(sc api.Schedule, err error) error {
	if err != nil || e.json {
		return printOr(e, sc, err)
	}
	tw := newTable(e.stdout)
	fmt.Fprintf(tw, "name\t%s\n", sc.Name)
	fmt.Fprintf(tw, "when\t%s\n", when(sc))
	fmt.Fprintf(tw, "starts\t%s %s\n", sc.Orchestration, jsonText(sc.Input))
	if sc.Module != "" {
		fmt.Fprintf(tw, "module\t%s\n", shortHash(sc.Module))
	}
	fmt.Fprintf(tw, "overlap\t%s\n", sc.Overlap)
	fmt.Fprintf(tw, "catch-up window\t%s\n", sc.CatchupWindow)
	if sc.Jitter != "" {
		fmt.Fprintf(tw, "jitter\t%s\n", sc.Jitter)
	}
	if sc.Paused {
		fmt.Fprintf(tw, "paused\t%s\n", orNone(sc.Note))
	}
	for i, t := range sc.NextRuns {
		label := ""
		if i == 0 {
			label = "next runs"
		}
		fmt.Fprintf(tw, "%s\t%s\n", label, timeText(t))
	}
	if sc.Buffered != nil {
		fmt.Fprintf(tw, "held back\t%s, until %s ends\n", timeText(*sc.Buffered), sc.LastInstance)
	}
	fmt.Fprintf(tw, "runs\t%d started, %d skipped, %d missed\n", sc.Started, sc.Skipped, sc.Missed)
	for _, r := range sc.Runs {
		showRun(tw, r)
	}
	return tw.Flush()
}

// showRun prints a line of a run.
func showRun(tw interface{ Write([]byte) (int, error) }, r api.ScheduleRun) {
	what := r.Outcome
	switch {
	case r.Manual:
		what += " by hand"
	case r.Error != "":
		what += ": " + r.Error
	}
	if r.InstanceID != "" {
		what += "  " + r.InstanceID
	}
	fmt.Fprintf(tw, "%s\t%s\n", timeText(r.Slot.In(time.UTC)), what)
}
