package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
)

var startCommand = &command{
	name:     "start",
	synopsis: "NAME [--input JSON|-] [--id ID] [--raise EVENT|--update NAME] [--wait] [flags]",
	summary:  "start an orchestration instance",
	about: "Start an instance of the orchestration NAME, on the newest module that\n" +
		"registers it or on the module HASH, and print its id. With --wait, wait for it\n" +
		"to finish, then print its status and its result; unless it completed (it\n" +
		"failed, was canceled or terminated), exit 1. If the host goes away while it\n" +
		"waits (a restart), it asks again until the host answers or --timeout passes.\n\n" +
		"A large input goes in a file (--input-file) or on stdin (--input -): the command\n" +
		"line holds a few hundred KiB at most. The host takes inputs up to its payload\n" +
		"limit (serve --max-payload-mib, 16 MiB unless set).\n\n" +
		"With --raise EVENT (and --id), signal with start: the instance starts with the\n" +
		"event EVENT (its data from --data or --data-file, --persistent for a persistent\n" +
		"one) raised at it, in one transaction; if the instance ID exists, the event is\n" +
		"only raised at it, as durabox raise does, and nothing starts. --json says which\n" +
		"(\"started\").\n\n" +
		"With --update NAME (and --id), update with start: the instance starts with the\n" +
		"update NAME (its argument from --data or --data-file, its id from --update-id)\n" +
		"sent to it, in one transaction, and the command prints the update's answer, as\n" +
		"durabox update does; if the instance ID exists, the update is only sent to it.",
	args:   []string{"NAME"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		input := fs.String("input", "null", "the orchestration's input, as `JSON`; - reads it from stdin (default null)")
		inputFile := fs.String("input-file", "", "read the orchestration's input, as JSON, from `FILE`")
		id := fs.String("id", "", "the new instance's `ID` (default: the host picks one)")
		module := fs.String("module", "", "start it on the module `HASH`, or a unique prefix, which must register NAME (default: the newest that does)")
		raise := fs.String("raise", "", "raise the event `EVENT` at the instance, starting it only if it does not exist (needs --id)")
		update := fs.String("update", "", "send the update `NAME` to the instance, starting it only if it does not exist (needs --id), and print its answer")
		updateID := fs.String("update-id", "", "with --update, the update's id, `UID`, unique in the instance (default: a new one)")
		data := fs.String("data", "null", "with --raise or --update, the event's data or the update's argument, as `JSON`; - reads it from stdin (default null)")
		dataFile := fs.String("data-file", "", "with --raise or --update, read the event's data or the update's argument, as JSON, from `FILE`")
		persistent := fs.Bool("persistent", false, "with --raise, raise a persistent event")
		wait := fs.Bool("wait", false, "wait for the instance to finish")
		var timeout time.Duration
		durationVar(fs, &timeout, "timeout", "0, the default, waits as long as it takes", "with --wait, give up waiting after `D`, such as 10m (default: wait as long as it takes)")
		return func(ctx context.Context, e *env) error {
			if err := abi.CheckName("orchestration name", e.args[0]); err != nil {
				return usagef("%v", err)
			}
			input, err := payload(e, fs, "input", *input, "input-file", *inputFile)
			if err != nil {
				return err
			}
			if timeout > 0 && !*wait {
				return usagef("--timeout is for --wait")
			}
			req := api.StartRequest{Name: e.args[0], Input: input, ID: *id, Module: *module}
			if *update != "" {
				return startWithUpdate(ctx, e, fs, req, *update, *data, *dataFile, *updateID, *raise != "" || *persistent || *wait)
			}
			if *updateID != "" {
				return usagef("--update-id is for --update")
			}
			if req.Raise, err = raised(e, fs, *raise, *data, *dataFile, *persistent); err != nil {
				return err
			}
			if req.Raise != nil && req.ID == "" {
				return usagef("--raise needs --id: the instance to start, or to raise the event at if it exists")
			}
			return start(ctx, e, req, *wait, timeout)
		}
	},
}

// raised returns the event start --raise raises, or nil without --raise;
// --data, --data-file and --persistent are refused without it.
func raised(e *env, fs *flag.FlagSet, name, data, dataFile string, persistent bool) (*api.RaiseRequest, error) {
	if name == "" {
		set := ""
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "data" || f.Name == "data-file" || f.Name == "persistent" {
				set = f.Name
			}
		})
		if set != "" {
			return nil, usagef("--%s is for --raise or --update", set)
		}
		return nil, nil
	}
	if err := abi.CheckName("event name", name); err != nil {
		return nil, usagef("--raise: %v", err)
	}
	raw, err := payload(e, fs, "data", data, "data-file", dataFile)
	if err != nil {
		return nil, err
	}
	return &api.RaiseRequest{Name: name, Data: raw, Persistent: persistent}, nil
}

// startWithUpdate serves start --update: it starts the instance req with
// the update name sent to it, and prints the update's answer. other is set
// when a flag that goes with no update (--raise, --persistent, --wait) is
// given.
func startWithUpdate(ctx context.Context, e *env, fs *flag.FlagSet, req api.StartRequest, name, data, dataFile, updateID string, other bool) error {
	switch {
	case other:
		return usagef("--update goes without --raise, --persistent and --wait: it waits for the update's answer")
	case req.ID == "":
		return usagef("--update needs --id: the instance to start, or to update if it exists")
	}
	up, err := updateRequest(e, fs, name, data, dataFile, updateID)
	if err != nil {
		return err
	}
	req.Update = &up
	u, err := e.client.StartWithUpdate(ctx, req)
	if err != nil {
		return err
	}
	if u.Started != nil && !*u.Started {
		fmt.Fprintf(e.stderr, "durabox: %s exists: the update %s was sent to it, and nothing started\n", req.ID, name)
	}
	return printUpdate(e, u)
}

// payload returns the JSON that the flag name of fs (such as input)
// gives, value, or, when it is "-", that stdin holds; or the content of
// the file its file flag (input-file) names.
func payload(e *env, fs *flag.FlagSet, name, value, fileFlag, file string) (json.RawMessage, error) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	what := "--" + name
	data := []byte(value)
	var err error
	switch {
	case set && file != "":
		return nil, usagef("--%s and --%s both give it; give one", name, fileFlag)
	case file != "":
		if data, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("durabox: --%s: %w", fileFlag, err)
		}
		what = "--" + fileFlag + " " + file
	case value == "-":
		if data, err = io.ReadAll(e.stdin); err != nil {
			return nil, fmt.Errorf("durabox: --%s -: read stdin: %w", name, err)
		}
		what += " - (stdin)"
	}
	if file != "" || value == "-" {
		// A value from a file or stdin is too long to quote in a hint.
		if !json.Valid(data) {
			var v json.RawMessage
			return nil, usagef("%s is not valid JSON: %v", what, json.Unmarshal(data, &v))
		}
		return data, nil
	}
	return data, checkJSON(what, value)
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

func start(ctx context.Context, e *env, req api.StartRequest, wait bool, timeout time.Duration) error {
	r, err := e.client.StartWith(ctx, req)
	if err != nil {
		return err
	}
	id := r.ID
	if r.Started != nil && !*r.Started {
		fmt.Fprintf(e.stderr, "durabox: %s exists: the event %s was raised at it, and nothing started\n", id, req.Raise.Name)
	}
	if !wait {
		if e.json {
			return printJSON(e.stdout, r)
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
