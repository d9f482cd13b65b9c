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
	synopsis: "NAME [--input JSON|-] [--input-file FILE] [--id ID] [--wait]",
	summary:  "start an orchestration instance",
	about: "Start an instance of the orchestration NAME, on the newest module that\n" +
		"registers it or on the module HASH, and print its id. With --wait, wait for it\n" +
		"to finish, then print its status and its result; unless it completed (it\n" +
		"failed, was canceled or terminated), exit 1. If the host goes away while it\n" +
		"waits (a restart), it asks again until the host answers or --timeout passes.\n\n" +
		"A large input goes in a file (--input-file) or on stdin (--input -): the command\n" +
		"line holds a few hundred KiB at most. The host takes inputs up to its payload\n" +
		"limit (serve --max-payload-mib, 16 MiB unless set).",
	args:   []string{"NAME"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		input := fs.String("input", "null", "the orchestration's input, as `JSON`; - reads it from stdin (default null)")
		inputFile := fs.String("input-file", "", "read the orchestration's input, as JSON, from `FILE`")
		id := fs.String("id", "", "the new instance's `ID` (default: the host picks one)")
		module := fs.String("module", "", "start it on the module `HASH`, or a unique prefix, which must register NAME (default: the newest that does)")
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
			return start(ctx, e, api.StartRequest{Name: e.args[0], Input: input, ID: *id, Module: *module}, *wait, timeout)
		}
	},
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
	id, err := e.client.Start(ctx, req)
	if err != nil {
		return err
	}
	if !wait {
		if e.json {
			return printJSON(e.stdout, api.StartResponse{ID: id})
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
