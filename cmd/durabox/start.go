package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client"
)

var startCommand = &command{
	name:     "start",
	synopsis: "NAME [--input JSON] [--id ID] [--module HASH] [--wait]",
	summary:  "start an orchestration instance",
	about: "Start an instance of the orchestration NAME, on the newest module that\n" +
		"registers it or on the module HASH, and print its id. With --wait, wait for it\n" +
		"to finish, then print its status and its result; if it failed, exit 1.",
	args:   []string{"NAME"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		input := fs.String("input", "null", "the orchestration's input, as `JSON` (default null)")
		id := fs.String("id", "", "the new instance's `ID` (default: the host picks one)")
		module := fs.String("module", "", "start it on the module `HASH`, or a unique prefix, which must register NAME (default: the newest that does)")
		wait := fs.Bool("wait", false, "wait for the instance to finish")
		return func(ctx context.Context, e *env) error {
			if err := checkJSON("--input", *input); err != nil {
				return err
			}
			return start(ctx, e, client.StartRequest{Name: e.args[0], Input: json.RawMessage(*input), ID: *id, Module: *module}, *wait)
		}
	},
}

// checkJSON checks that a flag's value is JSON, with a hint for the
// commonest mistake: a string without its quotes.
func checkJSON(flag, value string) error {
	var v json.RawMessage
	err := json.Unmarshal([]byte(value), &v)
	if err == nil {
		return nil
	}
	if t := strings.TrimSpace(value); t == "" || !strings.ContainsAny(t[:1], `{["`) {
		quoted, _ := json.Marshal(value)
		return usagef("%s is not valid JSON: %v (strings need quotes: %s '%s')", flag, err, flag, quoted)
	}
	return usagef("%s is not valid JSON: %v", flag, err)
}

func start(ctx context.Context, e *env, req client.StartRequest, wait bool) error {
	id, err := e.client.Start(ctx, req)
	if err != nil {
		return err
	}
	if !wait {
		if e.json {
			return printJSON(e.stdout, client.StartResponse{ID: id})
		}
		_, err := fmt.Fprintln(e.stdout, id)
		return err
	}
	if !e.json {
		fmt.Fprintln(e.stdout, id)
	}
	inst, err := e.client.Wait(ctx, id)
	if err != nil {
		return err
	}
	if e.json {
		err = printJSON(e.stdout, inst)
	} else if inst.Status == engine.StatusCompleted {
		_, err = fmt.Fprintf(e.stdout, "%s\n%s\n", inst.Status, jsonText(inst.Result))
	} else {
		_, err = fmt.Fprintln(e.stdout, inst.Status)
	}
	if err != nil || inst.Status != engine.StatusFailed {
		return err
	}
	return fmt.Errorf("durabox: start: instance %s failed: %v", id, inst.Failure)
}
