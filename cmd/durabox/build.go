package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

var buildCommand = &command{
	name:     "build",
	synopsis: "[DIR] [-o FILE]",
	summary:  "build a module and check it as a host will",
	about: "Build the main package in DIR (default: the current directory) into a module,\n" +
		"with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath, written to\n" +
		"FILE (default: DIR's name with .wasm, in the current directory); the compiler's\n" +
		"errors are printed as go build prints them. Then check the module as durabox\n" +
		"check does, exactly as a host checks it at deploy on each runtime, and print\n" +
		"its orchestrations and activities, or why a host would refuse it.",
	optional: []string{"DIR"},
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		out := fs.String("o", "", "write the module to `FILE` (default: DIR's name with .wasm, in the current directory)")
		asJSON := fs.Bool("json", false, "print JSON, for scripts")
		return func(ctx context.Context, e *env) error {
			dir := "."
			if len(e.args) > 0 {
				dir = e.args[0]
			}
			return build(ctx, e, dir, *out, *asJSON)
		}
	},
}

// built is what durabox build --json prints.
type built struct {
	File           string   `json:"file"`
	Bytes          int      `json:"bytes"`
	Hash           string   `json:"hash"`
	SDK            string   `json:"sdk"`
	Orchestrations []string `json:"orchestrations"`
	Activities     []string `json:"activities"`
}

func build(ctx context.Context, e *env, dir, out string, asJSON bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("durabox build: %w", err)
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return fmt.Errorf("durabox build: %s is not a directory; name the directory of the module's main package", dir)
	}
	if out == "" {
		out = wasmName(abs)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return errors.New("durabox build: the go command is not on PATH; install Go 1.25 or newer (https://go.dev/dl/)")
	}
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("durabox build: %w", err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-buildmode=c-shared", "-trimpath", "-o", outAbs, ".")
	cmd.Dir = abs
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("durabox build: go build failed (%w)", err)
	}
	wasm, err := os.ReadFile(outAbs)
	if err != nil {
		return fmt.Errorf("durabox build: %w", err)
	}
	c, err := checkModule(ctx, out, wasm)
	if err != nil {
		return fmt.Errorf("durabox build: %w", err)
	}
	if c.refusal != nil {
		return fmt.Errorf("durabox build: %s is built, but a host would refuse it: %w", out, c.refusal)
	}
	b := built{File: out, Bytes: c.Bytes, Hash: c.Hash, SDK: c.SDK, Orchestrations: c.Orchestrations, Activities: c.Activities}
	if asJSON {
		return printJSON(e.stdout, b)
	}
	_, err = fmt.Fprintf(e.stdout, "built %s  module %s  orchestrations: %s  activities: %s\ndeploy it with: durabox deploy %s\n",
		out, shortHash(b.Hash), names(b.Orchestrations), names(b.Activities), shellQuote(out))
	return err
}

// wasmName is the module file durabox build writes for the package in dir
// (an absolute path) by default.
func wasmName(dir string) string { return filepath.Base(dir) + ".wasm" }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes s for a POSIX shell, when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
