package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/durabox/durabox/host/client"
)

var raiseCommand = &command{
	name:     "raise",
	synopsis: "ID NAME [--data JSON] [--persistent]",
	summary:  "raise an external event for an instance",
	about: "Raise the event NAME, with data JSON, for the instance ID. A positional event\n" +
		"goes to the oldest wait for it that is active when it arrives, and is dropped\n" +
		"if there is none; a --persistent event waits for a persistent wait to take it.",
	args:   []string{"ID", "NAME"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		data := fs.String("data", "null", "the event's data, as `JSON` (default null)")
		persistent := fs.Bool("persistent", false, "raise a persistent event")
		return func(ctx context.Context, e *env) error {
			if err := checkJSON("--data", *data); err != nil {
				return err
			}
			req := client.RaiseRequest{Name: e.args[1], Data: json.RawMessage(*data), Persistent: *persistent}
			if err := e.client.Raise(ctx, e.args[0], req); err != nil {
				return err
			}
			if e.json {
				return printJSON(e.stdout, req)
			}
			kind := "event"
			if req.Persistent {
				kind = "persistent event"
			}
			_, err := fmt.Fprintf(e.stdout, "raised %s %s for %s\n", kind, req.Name, e.args[0])
			return err
		}
	},
}
