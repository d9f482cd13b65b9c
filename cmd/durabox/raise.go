package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
)

var raiseCommand = &command{
	name:     "raise",
	synopsis: "ID NAME [--data JSON|-] [--data-file FILE] [--persistent]",
	summary:  "raise an external event for an instance",
	about: "Raise the event NAME, with data JSON, for the instance ID. A positional event\n" +
		"goes to the oldest wait for it that is active when it arrives, and is dropped\n" +
		"if there is none; a --persistent event waits for a persistent wait to take it.",
	args:   []string{"ID", "NAME"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		data := fs.String("data", "null", "the event's data, as `JSON`; - reads it from stdin (default null)")
		dataFile := fs.String("data-file", "", "read the event's data, as JSON, from `FILE`")
		persistent := fs.Bool("persistent", false, "raise a persistent event")
		return func(ctx context.Context, e *env) error {
			// JSON carries a name that is not UTF-8 as U+FFFD: the
			// host could not tell.
			if err := abi.CheckName("event name", e.args[1]); err != nil {
				return usagef("%v", err)
			}
			data, err := payload(e, fs, "data", *data, "data-file", *dataFile)
			if err != nil {
				return err
			}
			req := api.RaiseRequest{Name: e.args[1], Data: data, Persistent: *persistent}
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
			_, err = fmt.Fprintf(e.stdout, "raised %s %s for %s\n", kind, req.Name, e.args[0])
			return err
		}
	},
}
