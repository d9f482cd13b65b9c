package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/client"
)

// requestCommand returns the command name, which asks the host to end the
// instance ID with send (cancel, terminate), for the reason --reason
// gives, and says that it asked (the noun names the request).
func requestCommand(name, summary, about, noun string, send func(c *client.Client, ctx context.Context, id, reason string) error) *command {
	return &command{
		name:     name,
		synopsis: "ID [--reason TEXT]",
		summary:  summary,
		about:    about,
		args:     []string{"ID"},
		client:   true,
		define: func(fs *flag.FlagSet) func(context.Context, *env) error {
			reason := fs.String("reason", "", "why, in `TEXT` its history will show")
			return func(ctx context.Context, e *env) error {
				if err := abi.CheckReason(name+" reason", *reason); err != nil {
					return usagef("%v", err)
				}
				if err := send(e.client, ctx, e.args[0], *reason); err != nil {
					return err
				}
				if e.json {
					return printJSON(e.stdout, map[string]string{"id": e.args[0], "reason": *reason})
				}
				_, err := fmt.Fprintf(e.stdout, "%s of %s requested\n", noun, e.args[0])
				return err
			}
		},
	}
}
