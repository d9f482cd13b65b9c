package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
)

var purgeCommand = &command{
	name:     "purge",
	synopsis: "[ID] [--status STATUS] [--before T] [flags]",
	summary:  "delete finished instances and their histories",
	about: "Delete the instance ID, which must have finished (Completed, Failed, Canceled or\n" +
		"Terminated), with the history of all its executions; its id is free again. An\n" +
		"instance still running is refused: cancel or terminate it first, or wait.\n\n" +
		"Without ID, delete every finished instance the flags select (at least one),\n" +
		"such as --status Completed --before 2026-01-01, and say how many; --dry-run\n" +
		"only says how many it would. Instances still running are never selected.\n" +
		"This cannot be undone.",
	optional: []string{"ID"},
	client:   true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var filter filterFlags
		filter.define(fs)
		dryRun := fs.Bool("dry-run", false, "say how many instances the flags select, and delete none")
		return func(ctx context.Context, e *env) error {
			switch {
			case len(e.args) == 1 && (filter.set() || *dryRun):
				return usagef("give an instance ID or the flags that select instances, not both")
			case len(e.args) == 1:
				return purgeOne(ctx, e, e.args[0])
			case !filter.set():
				return usagef("say what to purge: an instance ID, or flags such as --status Completed --before 2026-01-01")
			}
			f, err := filter.filter(ctx, e)
			if err != nil {
				return err
			}
			return purgeMatching(ctx, e, f, *dryRun)
		}
	},
}

func purgeOne(ctx context.Context, e *env, id string) error {
	if err := e.client.Purge(ctx, id); err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, api.PurgeResponse{ID: id})
	}
	_, err := fmt.Fprintf(e.stdout, "purged %s\n", id)
	return err
}

func purgeMatching(ctx context.Context, e *env, f client.Filter, dryRun bool) error {
	n, err := e.client.PurgeMatching(ctx, f, dryRun)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, api.PurgedResponse{Purged: n, DryRun: dryRun})
	}
	if dryRun {
		_, err = fmt.Fprintf(e.stdout, "%s would be purged (a dry run: none was)\n", instancesText(n))
	} else {
		_, err = fmt.Fprintf(e.stdout, "purged %s\n", instancesText(n))
	}
	return err
}

// instancesText says how many instances, for people.
func instancesText(n int) string {
	if n == 1 {
		return "1 instance"
	}
	return fmt.Sprintf("%d instances", n)
}
