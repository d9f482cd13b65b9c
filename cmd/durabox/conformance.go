package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/guestkit"
)

var conformanceCommand = &command{
	name:     "conformance",
	synopsis: "FILE.wasm [--runtime wazero|wasmtime|both] [--run REGEXP]",
	summary:  "run the guest conformance kit on a module built with any SDK",
	about: "Run the guest conformance kit on the conformance module in FILE.wasm: the\n" +
		"orchestrations and activities docs/conformance.md specifies, written with the\n" +
		"SDK under test. Each case runs on the real host and engine (a host on a\n" +
		"temporary SQLite file, driven one step at a time under a clock the kit moves)\n" +
		"or on the raw ABI, with no server. Print each case's outcome on each runtime,\n" +
		"PASS, FAIL or SKIP, and under each failure what the kit expected, what the\n" +
		"module did and what to fix; exit 1 when any case fails.",
	args: []string{"FILE.wasm"},
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		asJSON := fs.Bool("json", false, "print JSON, for scripts")
		runtime := fs.String("runtime", "both", "the runtime to run on: wazero, wasmtime or both")
		only := fs.String("run", "", "run only the cases whose names match this regular expression")
		return func(ctx context.Context, e *env) error {
			opts := guestkit.Options{}
			switch *runtime {
			case "both":
			case host.RuntimeWazero, host.RuntimeWasmtime:
				opts.Runtimes = []string{*runtime}
			default:
				return usagef("--runtime is wazero, wasmtime or both, not %q", *runtime)
			}
			if *only != "" {
				re, err := regexp.Compile(*only)
				if err != nil {
					return usagef("--run: %v", err)
				}
				opts.Run = re
			}
			wasm, err := os.ReadFile(e.args[0])
			if err != nil {
				return fmt.Errorf("durabox conformance: %w", err)
			}
			report, err := guestkit.Check(ctx, wasm, opts)
			if err != nil {
				return fmt.Errorf("durabox conformance: %w", err)
			}
			sum := sha256.Sum256(wasm)
			c := conformed{File: e.args[0], Hash: hex.EncodeToString(sum[:]), Report: report}
			if *asJSON {
				err = printJSON(e.stdout, c)
			} else {
				err = c.print(e)
			}
			if failed := len(report.Failed()); err == nil && failed > 0 {
				err = exitError{code: 1, msg: fmt.Sprintf("durabox conformance: %s fails %d of %d cases; docs/conformance.md says what each expects", e.args[0], failed, len(report.Results))}
			}
			return err
		}
	},
}

// conformed is what durabox conformance found, and what durabox
// conformance --json prints.
type conformed struct {
	File string `json:"file"`
	Hash string `json:"hash"`
	*guestkit.Report
}

func (c conformed) print(e *env) error {
	fmt.Fprintf(e.stdout, "module %s  sdk: %s\n", shortHash(c.Hash), c.SDK)
	tw := newTable(e.stdout)
	count := map[guestkit.Status]int{}
	for _, r := range c.Results {
		count[r.Status]++
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.Status, r.Runtime, r.Case)
		if r.Message != "" {
			fmt.Fprintf(tw, "\t\t    %s\n", strings.ReplaceAll(r.Message, "\n", "\n\t\t    "))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "%d passed, %d failed, %d skipped\n", count[guestkit.Pass], count[guestkit.Fail], count[guestkit.Skip])
	return err
}
