package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/bundle"
)

var replayCommand = &command{
	name:     "replay",
	synopsis: "ID|FILE.dbx [--module HASH|FILE.wasm] [--execution N]",
	summary:  "check that code reproduces an instance's history",
	about: "Replay the history of the instance ID (its current execution, or execution N)\n" +
		"on the module it runs on, or on the deployed module HASH (or a unique prefix),\n" +
		"in the host's sandbox, and print ok or where the code diverges: the event, what\n" +
		"history has there and what the code emitted. Nothing changes.\n" +
		"\n" +
		"Given a repro bundle FILE.dbx (durabox export) instead, replay it on this\n" +
		"machine, with no host and no database: on the module the bundle holds, or on\n" +
		"the module FILE.wasm, printing the guest's log (every line, replayed or not)\n" +
		"and then ok or where it diverges. An argument that names a file is a bundle.\n" +
		"Exit 1 if the code does not reproduce the history.",
	args:   []string{"ID|FILE.dbx"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		module := fs.String("module", "", "replay on the deployed module `HASH`, or, for a bundle, on the module file FILE.wasm (default: the instance's, or the bundle's)")
		var execution int64
		executionVar(fs, &execution, "replay execution `N` (1, 2, …) instead of the current one")
		return func(ctx context.Context, e *env) error {
			if info, err := os.Stat(e.args[0]); err == nil && info.Mode().IsRegular() {
				return replayBundle(ctx, e, e.args[0], *module, execution)
			}
			rep, err := e.client.Replay(ctx, e.args[0], api.ReplayRequest{Module: *module, Execution: execution})
			if err != nil {
				return err
			}
			return printReplay(e, rep)
		}
	},
}

// replayedBundle is what durabox replay FILE.dbx --json prints.
type replayedBundle struct {
	api.ReplayReport
	// Log is what the guest printed, a line each.
	Log []string `json:"log"`
}

// replayBundle replays a repro bundle with the sandbox alone.
func replayBundle(ctx context.Context, e *env, file, module string, execution int64) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("durabox replay: %w", err)
	}
	b, err := bundle.Read(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return fmt.Errorf("durabox replay: %s: %w", file, err)
	}
	x := b.Executions[len(b.Executions)-1]
	if execution != 0 {
		i := slices.IndexFunc(b.Executions, func(x bundle.Execution) bool { return x.Number == execution })
		if i < 0 {
			var held []string
			for _, x := range b.Executions {
				held = append(held, strconv.FormatInt(x.Number, 10))
			}
			return fmt.Errorf("durabox replay: %s holds execution %s of instance %s, not %d", file, strings.Join(held, ", "), b.InstanceID, execution)
		}
		x = b.Executions[i]
	}
	wasm, on := b.Module, "the bundle's"
	if module != "" {
		if wasm, err = os.ReadFile(module); err != nil {
			return fmt.Errorf("durabox replay: --module: %w", err)
		}
		on = module
	}
	r, err := host.NewReplayer(host.Options{})
	if err != nil {
		return fmt.Errorf("durabox replay: %w", err)
	}
	defer r.Close()
	var log bytes.Buffer
	rep, err := r.Replay(ctx, wasm, host.Recording{InstanceID: b.InstanceID, Execution: x.Number, Seed: x.Seed, History: x.History}, &log)
	if err != nil {
		return fmt.Errorf("durabox replay: %s: %w", file, err)
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if log.Len() == 0 {
		lines = []string{}
	}
	if e.json {
		if err := printJSON(e.stdout, replayedBundle{ReplayReport: rep, Log: lines}); err != nil {
			return err
		}
		return replayErr(rep)
	}
	fmt.Fprintf(e.stdout, "replay of %s: instance %s (%s), execution %d, on module %s (%s)\n",
		file, b.InstanceID, b.Name, x.Number, shortHash(rep.Module), on)
	if len(lines) > 0 {
		fmt.Fprintln(e.stdout, "the guest's log:")
		for _, l := range lines {
			fmt.Fprintln(e.stdout, "  "+l)
		}
	}
	return printReplay(e, rep)
}

// printReplay prints how a replay went, and fails when the code did not
// reproduce the history.
func printReplay(e *env, rep api.ReplayReport) error {
	if e.json {
		if err := printJSON(e.stdout, rep); err != nil {
			return err
		}
		return replayErr(rep)
	}
	var err error
	switch {
	case rep.Divergence != nil:
		_, err = fmt.Fprintf(e.stdout, "diverges: %s\n", rep.Divergence.Message)
	case rep.Failure != "":
		_, err = fmt.Fprintf(e.stdout, "fails: %s\n", rep.Failure)
	default:
		_, err = fmt.Fprintf(e.stdout, "ok: module %s reproduces the %s of instance %s, execution %d; it is %s\n",
			shortHash(rep.Module), counted(rep.Events, "event"), rep.InstanceID, rep.Execution, rep.Status)
	}
	if err != nil {
		return err
	}
	return replayErr(rep)
}

// replayErr is the error a replay that did not reproduce its history exits
// with.
func replayErr(rep api.ReplayReport) error {
	if rep.OK() {
		return nil
	}
	return errors.New("durabox replay: the code does not reproduce the history")
}
