package main

import (
	"context"
	"flag"
	"fmt"
)

var purgeCommand = &command{
	name:     "purge",
	synopsis: "ID",
	summary:  "delete a finished instance and its history",
	about: "Delete the instance ID, which must have finished (Completed, Failed or Canceled),\n" +
		"with the history of all its executions; its id is free again. This cannot be\n" +
		"undone. An instance still running is refused: cancel it first, or wait.",
	args:   []string{"ID"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error { return purge },
}

func purge(ctx context.Context, e *env) error {
	if err := e.client.Purge(ctx, e.args[0]); err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, map[string]string{"id": e.args[0]})
	}
	_, err := fmt.Fprintf(e.stdout, "purged %s\n", e.args[0])
	return err
}
