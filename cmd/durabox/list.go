package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/durabox/durabox/host/client"
)

var listCommand = &command{
	name:    "list",
	summary: "list the instances",
	about:   "List the instances, newest first.",
	client:  true,
	define:  func(fs *flag.FlagSet) func(context.Context, *env) error { return list },
}

func list(ctx context.Context, e *env) error {
	insts, err := e.client.List(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, client.InstancesResponse{Instances: insts})
	}
	if len(insts) == 0 {
		_, err := fmt.Fprintln(e.stdout, "no instances")
		return err
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tCREATED\tUPDATED")
	for _, inst := range insts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", inst.ID, inst.Name, inst.Status, timeText(inst.CreatedAt), timeText(inst.UpdatedAt))
	}
	return tw.Flush()
}
