package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"

	"github.com/durabox/durabox/host"
)

var checkCommand = &command{
	name:     "check",
	synopsis: "FILE.wasm",
	summary:  "check a module as a host will, on each runtime",
	about: "Check the module in FILE.wasm exactly as a host checks it at deploy, on each\n" +
		"runtime (wazero and wasmtime), with no host: its size, its imports (among them\n" +
		"wasi_snapshot_preview1.sched_yield), its exports, its ABI version, and the names\n" +
		"it registers. Print what it registers and, for each runtime, ok or why a host\n" +
		"would refuse it; exit 1 when one would. durabox build runs it on what it builds.",
	args: []string{"FILE.wasm"},
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		asJSON := fs.Bool("json", false, "print JSON, for scripts")
		return func(ctx context.Context, e *env) error {
			wasm, err := os.ReadFile(e.args[0])
			if err != nil {
				return fmt.Errorf("durabox check: %w", err)
			}
			c, err := checkModule(ctx, e.args[0], wasm)
			if err != nil {
				return fmt.Errorf("durabox check: %w", err)
			}
			if *asJSON {
				err = printJSON(e.stdout, c)
			} else {
				err = c.print(e)
			}
			if err == nil && c.refusal != nil {
				err = exitError{code: 1, msg: fmt.Sprintf("durabox check: a host would refuse %s: %v", e.args[0], c.refusal)}
			}
			return err
		}
	},
}

// checked is what durabox check found, and what durabox check --json
// prints.
type checked struct {
	File           string         `json:"file"`
	Bytes          int            `json:"bytes"`
	Hash           string         `json:"hash"`
	SDK            string         `json:"sdk"`
	Orchestrations []string       `json:"orchestrations"`
	Activities     []string       `json:"activities"`
	Runtimes       []runtimeCheck `json:"runtimes"`
	// refusal is why a host would refuse the module: the first runtime's
	// refusal, named when another runtime says otherwise; nil for none.
	refusal error
}

// runtimeCheck is one runtime's verdict.
type runtimeCheck struct {
	Runtime string `json:"runtime"`
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
}

// checkModule checks wasm, read from file, on every runtime.
func checkModule(ctx context.Context, file string, wasm []byte) (checked, error) {
	report, err := host.CheckModule(ctx, wasm, nil)
	if err != nil {
		return checked{}, err
	}
	sum := sha256.Sum256(wasm)
	c := checked{File: file, Bytes: len(wasm), Hash: hex.EncodeToString(sum[:]), Orchestrations: []string{}, Activities: []string{}}
	if m := report.Manifest; m != nil {
		c.SDK, c.Orchestrations, c.Activities = m.SDK, nonNil(m.Orchestrations), nonNil(m.Activities)
	}
	first := -1
	for i, r := range report.Runtimes {
		rc := runtimeCheck{Runtime: r.Runtime, OK: r.Err == nil}
		if r.Err != nil {
			rc.Error = r.Err.Error()
			if first < 0 {
				first, c.refusal = i, r.Err
			}
		}
		c.Runtimes = append(c.Runtimes, rc)
	}
	for _, r := range c.Runtimes {
		if first >= 0 && r.Error != c.Runtimes[first].Error {
			c.refusal = fmt.Errorf("on %s: %w", c.Runtimes[first].Runtime, c.refusal)
			break
		}
	}
	return c, nil
}

func (c checked) print(e *env) error {
	fmt.Fprintf(e.stdout, "module %s  orchestrations: %s  activities: %s\n", shortHash(c.Hash), names(c.Orchestrations), names(c.Activities))
	tw := newTable(e.stdout)
	for _, r := range c.Runtimes {
		verdict := "ok"
		if !r.OK {
			verdict = "refused: " + r.Error
		}
		fmt.Fprintf(tw, "  %s\t%s\n", r.Runtime, verdict)
	}
	return tw.Flush()
}
