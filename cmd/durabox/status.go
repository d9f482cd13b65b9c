package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
)

var statusCommand = &command{
	name:     "status",
	synopsis: "ID",
	summary:  "show an instance",
	about: "Show where the instance ID stands: its status, input, and result or failure,\n" +
		"its search attributes, its executions and the instances it started (--json: all\n" +
		"of them, up to 100), and, while it runs, when a turn last changed it and what it\n" +
		"waits on: its activity calls (attempt, task queue, last error, next retry),\n" +
		"timers (when due), events, updates and children.",
	args:   []string{"ID"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error { return status },
}

func status(ctx context.Context, e *env) error {
	d, err := e.client.Details(ctx, e.args[0])
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, d)
	}
	inst := d.Instance
	tw := newTable(e.stdout)
	fmt.Fprintf(tw, "id\t%s\n", inst.ID)
	fmt.Fprintf(tw, "name\t%s\n", inst.Name)
	fmt.Fprintf(tw, "status\t%s\n", inst.Status)
	if inst.CustomStatus != "" {
		fmt.Fprintf(tw, "custom status\t%s\n", inst.CustomStatus)
	}
	fmt.Fprintf(tw, "module\t%s\n", shortHash(inst.ModuleHash))
	if inst.ParentID != "" {
		fmt.Fprintf(tw, "parent\t%s\n", inst.ParentID)
	}
	fmt.Fprintf(tw, "execution\t%d\n", inst.ExecutionID)
	fmt.Fprintf(tw, "created\t%s\n", timeText(inst.CreatedAt))
	fmt.Fprintf(tw, "updated\t%s\n", timeText(inst.UpdatedAt))
	fmt.Fprintf(tw, "input\t%s\n", jsonText(inst.Input))
	if inst.Result != nil {
		fmt.Fprintf(tw, "result\t%s\n", jsonText(inst.Result))
	}
	if f := inst.Failure; f != nil {
		fmt.Fprintf(tw, "failure\t%s\n", f.Message)
		if f.Details != "" {
			fmt.Fprintf(tw, "details\t%s\n", f.Details)
		}
	}
	for _, a := range d.Attributes {
		v, _ := json.Marshal(a.Value)
		fmt.Fprintf(tw, "attribute\t%s = %s (%s)\n", a.Name, v, a.Type)
	}
	if n := len(d.Children); n > 0 {
		more := ""
		if d.ChildrenNext != "" {
			more = " or more"
		}
		fmt.Fprintf(tw, "children\t%d%s (durabox list --parent %s)\n", n, more, inst.ID)
	}
	if p := d.LastProgress; p != nil {
		fmt.Fprintf(tw, "last progress\t%s\n", timeText(*p))
	}
	for _, a := range d.Activities {
		fmt.Fprintf(tw, "waiting on\tactivity %s\n", pendingText(a))
	}
	for _, w := range d.WaitingOn {
		fmt.Fprintf(tw, "waiting on\t%s %s\n", w.Kind, waitText(w))
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", w)
	}
	return tw.Flush()
}

// pendingText describes an activity call an instance waits on.
func pendingText(a api.PendingActivity) string {
	where := "in its module"
	if a.Queue != "" {
		where = "on task queue " + a.Queue
	}
	state := fmt.Sprintf("waiting since %s", timeText(a.Since))
	if a.Running {
		state = fmt.Sprintf("attempt %d running", a.Attempt)
	} else if a.Attempt > 0 {
		state += fmt.Sprintf(", after %d attempt(s)", a.Attempt)
	}
	if a.NextRetry != nil {
		state = fmt.Sprintf("attempt %d failed, next attempt at %s", a.Attempt, timeText(*a.NextRetry))
	}
	s := fmt.Sprintf("%s %s: %s", a.Activity, where, state)
	if a.TimeoutMs > 0 {
		s += fmt.Sprintf(", each attempt's deadline %s", time.Duration(a.TimeoutMs)*time.Millisecond)
	}
	if a.LastError != "" {
		s += ", last error: " + a.LastError
	}
	if a.LastHeartbeat != nil {
		s += ", last heartbeat " + jsonText(a.LastHeartbeat)
	}
	return s
}

// waitText describes what else an instance waits on.
func waitText(w engine.Wait) string {
	var s string
	switch w.Kind {
	case engine.WaitTimer:
		s = "due at " + timeText(*w.Due)
	case engine.WaitEvent:
		s = w.Name
		if w.Persistent {
			s += " (persistent)"
		}
	case engine.WaitChild:
		s = fmt.Sprintf("%s %s (durabox status %s)", w.Name, w.ID, w.ID)
	case engine.WaitUpdate:
		if w.ID == "" {
			return "of any name: it waits on nothing else"
		}
		s = fmt.Sprintf("%s %s, its handler running", w.Name, w.ID)
	}
	return s + ", since " + timeText(w.Since)
}
