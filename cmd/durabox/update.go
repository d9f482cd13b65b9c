package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
)

var updateCommand = &command{
	name:     "update",
	synopsis: "ID NAME [--data JSON|-] [--data-file FILE] [--update-id UID]",
	summary:  "send an instance an update its orchestration handles, and print the answer",
	about: "Run the update handler NAME of the instance ID with the argument JSON, wait for\n" +
		"its answer and print it. An update changes the instance: the handler may call\n" +
		"activities and sleep, and its acceptance and answer are in history. The\n" +
		"orchestration may refuse it (its validator, or no handler of that name): then\n" +
		"nothing of it is written, and the command exits 1 with the reason, as it does\n" +
		"when the handler fails.\n\n" +
		"--update-id names the update: a second update with the same id gets the first\n" +
		"one's answer and runs nothing again, so a script that retries should give each\n" +
		"update an id of its own (without one, each run of the command is a new update).\n" +
		"If the host goes away while the command waits, ask again with the same id.",
	args:   []string{"ID", "NAME"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		data := fs.String("data", "null", "the update's argument, as `JSON`; - reads it from stdin (default null)")
		dataFile := fs.String("data-file", "", "read the update's argument, as JSON, from `FILE`")
		updateID := fs.String("update-id", "", "the update's id, `UID`, unique in the instance (default: a new one)")
		return func(ctx context.Context, e *env) error {
			req, err := updateRequest(e, fs, e.args[1], *data, *dataFile, *updateID)
			if err != nil {
				return err
			}
			u, err := e.client.Update(ctx, e.args[0], req)
			if err != nil {
				return err
			}
			return printUpdate(e, u)
		}
	},
}

// updateRequest checks an update's name and id and reads its data.
func updateRequest(e *env, fs *flag.FlagSet, name, data, dataFile, id string) (api.UpdateRequest, error) {
	if err := abi.CheckName("update name", name); err != nil {
		return api.UpdateRequest{}, usagef("%v", err)
	}
	if id != "" {
		if err := abi.CheckName("update id", id); err != nil {
			return api.UpdateRequest{}, usagef("--update-id: %v", err)
		}
	}
	raw, err := payload(e, fs, "data", data, "data-file", dataFile)
	if err != nil {
		return api.UpdateRequest{}, err
	}
	return api.UpdateRequest{Name: name, Data: raw, ID: id}, nil
}

// printUpdate prints an update's answer: the handler's result, or, for
// one that failed or was refused, an error that says so.
func printUpdate(e *env, u api.Update) error {
	if e.json {
		if err := printJSON(e.stdout, u); err != nil {
			return err
		}
	} else if u.State == "Completed" {
		if _, err := fmt.Fprintln(e.stdout, jsonText(u.Result)); err != nil {
			return err
		}
	}
	why := "no reason given"
	if u.Failure != nil {
		why = u.Failure.Message
	}
	switch u.State {
	case "Completed":
		return nil
	case "Refused":
		return fmt.Errorf("durabox: update: instance %s refused update %s (%s): %s; nothing of it was written", u.InstanceID, u.Name, u.ID, why)
	}
	return fmt.Errorf("durabox: update: update %s (%s) of instance %s failed: %s", u.Name, u.ID, u.InstanceID, why)
}
