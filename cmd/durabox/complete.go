package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/durabox/durabox/host/api"
)

var completeCommand = &command{
	name:     "complete",
	synopsis: "TOKEN [--result JSON|-] [--result-file FILE] [--fail MESSAGE [--type TYPE]]",
	summary:  "complete an activity that waits for its outcome from outside",
	about: "Complete the activity attempt that waits for the token TOKEN (the one\n" +
		"durabox.CompleteLater gave it) with the result JSON, or, with --fail, fail it\n" +
		"with MESSAGE. The orchestration gets the outcome at its next step. A token is\n" +
		"taken once, and only before the attempt's deadline: a second completion, or a\n" +
		"late one, is refused (exit 1), saying why.",
	args:   []string{"TOKEN"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		result := fs.String("result", "null", "the activity's result, as `JSON`; - reads it from stdin (default null)")
		resultFile := fs.String("result-file", "", "read the activity's result, as JSON, from `FILE`")
		fail := fs.String("fail", "", "fail the activity with `MESSAGE` instead")
		failType := fs.String("type", "", "with --fail, the error's `TYPE`, which a retry policy's non-retryable types name")
		return func(ctx context.Context, e *env) error {
			token := e.args[0]
			if *fail != "" {
				if err := e.client.FailTask(ctx, token, api.FailTaskRequest{Message: *fail, Type: *failType}); err != nil {
					return err
				}
				_, err := fmt.Fprintln(e.stdout, "failed")
				return err
			}
			if *failType != "" {
				return usagef("--type goes with --fail, the failure it names")
			}
			data, err := payload(e, fs, "result", *result, "result-file", *resultFile)
			if err != nil {
				return err
			}
			if err := e.client.CompleteTask(ctx, token, data); err != nil {
				return err
			}
			_, err = fmt.Fprintln(e.stdout, "completed")
			return err
		}
	},
}
