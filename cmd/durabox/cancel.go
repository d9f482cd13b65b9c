package main

import (
	"context"
	"flag"
	"fmt"
)

var cancelCommand = &command{
	name:     "cancel",
	synopsis: "ID [--reason TEXT]",
	summary:  "cancel an instance",
	about: "Request the cancellation of the instance ID. The orchestration sees it: what it\n" +
		"waits on is cancelled (children too), and it may clean up before it ends.",
	args:   []string{"ID"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		reason := fs.String("reason", "", "why, in `TEXT` the orchestration and its history will show")
		return func(ctx context.Context, e *env) error {
			if err := e.client.Cancel(ctx, e.args[0], *reason); err != nil {
				return err
			}
			if e.json {
				return printJSON(e.stdout, map[string]string{"id": e.args[0], "reason": *reason})
			}
			_, err := fmt.Fprintf(e.stdout, "cancellation of %s requested\n", e.args[0])
			return err
		}
	},
}
