package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
)

var queryCommand = &command{
	name:     "query",
	synopsis: "ID NAME [--data JSON|-] [--data-file FILE]",
	summary:  "ask an instance a query its orchestration handles",
	about: "Run the query handler NAME of the instance ID with the argument JSON, and print\n" +
		"its answer. Nothing is written: the handler reads the orchestration's state, on\n" +
		"the instance the host keeps in memory or on a replay of its history, and works\n" +
		"on a finished instance too. A handler that fails, or tries to change the\n" +
		"instance, fails the query and leaves the instance as it was.",
	args:   []string{"ID", "NAME"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		data := fs.String("data", "null", "the query's argument, as `JSON`; - reads it from stdin (default null)")
		dataFile := fs.String("data-file", "", "read the query's argument, as JSON, from `FILE`")
		return func(ctx context.Context, e *env) error {
			if err := abi.CheckName("query name", e.args[1]); err != nil {
				return usagef("%v", err)
			}
			data, err := payload(e, fs, "data", *data, "data-file", *dataFile)
			if err != nil {
				return err
			}
			result, err := e.client.Query(ctx, e.args[0], e.args[1], data)
			if err != nil {
				return err
			}
			if e.json {
				return printJSON(e.stdout, api.QueryResponse{Result: result})
			}
			var b bytes.Buffer
			if json.Indent(&b, result, "", "  ") != nil {
				b.Reset()
				b.Write(result)
			}
			b.WriteByte('\n')
			_, err = e.stdout.Write(b.Bytes())
			return err
		}
	},
}
