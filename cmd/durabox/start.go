package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/client"
)

var startCommand = &command{
	name:     "start",
	synopsis: "NAME [--input JSON] [--id ID] [--module HASH] [--wait]",
	summary:  "start an orchestration instance",
	about: "Start an instance of the orchestration NAME, on the newest module that\n" +
		"registers it or on the module HASH, and print its id. With --wait, wait for it\n" +
		"to finish, then print its status and its result; unless it completed (it\n" +
		"failed, was canceled or terminated), exit 1. If the host goes away while it\n" +
		"waits (a restart), it asks again until the host answers or --timeout passes.",
	args:   []string{"NAME"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		input := fs.String("input", "null", "the orchestration's input, as `JSON` (default null)")
		id := fs.String("id", "", "the new instance's `ID` (default: the host picks one)")
		module := fs.String("module", "", "start it on the module `HASH`, or a unique prefix, which must register NAME (default: the newest that does)")
		wait := fs.Bool("wait", false, "wait for the instance to finish")
		timeout := fs.Duration("timeout", 0, "with --wait, give up waiting after `D`, such as 10m (default: wait as long as it takes)")
		return func(ctx context.Context, e *env) error {
			if err := checkJSON("--input", *input); err != nil {
				return err
			}
			if *timeout < 0 || *timeout > 0 && !*wait {
				return usagef("--timeout is for --wait, and at least 0")
			}
			return start(ctx, e, client.StartRequest{Name: e.args[0], Input: json.RawMessage(*input), ID: *id, Module: *module}, *wait, *timeout)
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

func start(ctx context.Context, e *env, req client.StartRequest, wait bool, timeout time.Duration) error {
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
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	inst, err := e.client.Wait(ctx, id)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("durabox: start: gave up waiting for %s after %s (--timeout); `durabox status %s` shows where it stands", id, timeout, id)
	}
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
	if err != nil || inst.Status == engine.StatusCompleted {
		return err
	}
	return fmt.Errorf("durabox: start: instance %s ended %s: %v", id, inst.Status, inst.Failure)
}
