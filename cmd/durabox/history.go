package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
)

var historyCommand = &command{
	name:     "history",
	synopsis: "ID [--execution N]",
	summary:  "show an instance's history",
	about: "Show the history of the instance ID's current execution, oldest event first,\n" +
		"or of its earlier execution N (an instance that continued as new has several).",
	args:   []string{"ID"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var execution int64
		executionVar(fs, &execution, "show execution `N` (1, 2, …) instead of the current one")
		return func(ctx context.Context, e *env) error { return history(ctx, e, execution) }
	},
}

func history(ctx context.Context, e *env, execution int64) error {
	events, err := e.client.ExecutionHistory(ctx, e.args[0], execution)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, api.HistoryResponse{Events: events})
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "ID\tTIME\tKIND\tDETAILS")
	for _, ev := range events {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", ev.ID, timeText(ev.Time), ev.Kind, details(ev))
	}
	return tw.Flush()
}

// details shows the fields an event sets, but for the instance id (the
// table is about one instance), each as name=value.
func details(ev engine.Event) string {
	var d []string
	if ev.Name != "" {
		d = append(d, "name="+ev.Name)
	}
	if ev.UpdateID != "" {
		d = append(d, "updateId="+ev.UpdateID)
	}
	if ev.ScheduleID != 0 {
		d = append(d, fmt.Sprintf("scheduleId=%d", ev.ScheduleID))
	}
	if ev.FireAt != nil {
		d = append(d, "fireAt="+timeText(*ev.FireAt))
	}
	if ev.Input != nil {
		d = append(d, "input="+jsonText(ev.Input))
	}
	if ev.Result != nil {
		d = append(d, "result="+jsonText(ev.Result))
	}
	if ev.Failure != nil {
		d = append(d, fmt.Sprintf("failure=%q", ev.Failure.Message))
	}
	if ev.FromModule != "" {
		d = append(d, "fromModule="+shortHash(ev.FromModule))
	}
	if ev.Module != "" {
		d = append(d, "module="+shortHash(ev.Module))
	}
	if ev.Reason != "" {
		d = append(d, fmt.Sprintf("reason=%q", ev.Reason))
	}
	if ev.By != "" {
		d = append(d, "by="+ev.By)
	}
	return strings.Join(d, " ")
}
