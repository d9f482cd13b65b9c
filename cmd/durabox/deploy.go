package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/durabox/durabox/host/api"
)

var deployCommand = &command{
	name:     "deploy",
	synopsis: "FILE.wasm [--env KEY=VALUE]... [--env-clear]",
	summary:  "deploy a module to the host",
	about: "Send the module FILE.wasm to the host, which checks it and keeps it, and print\n" +
		"what it registers. New instances of its orchestrations run on it. Each --env\n" +
		"sets an environment variable its activities see (orchestrations see none); the\n" +
		"values travel in the request's body and the host never shows them again.\n" +
		"Deploying a module again without --env keeps the environment it had; --env\n" +
		"replaces all of it, and --env-clear removes it.",
	args:   []string{"FILE.wasm"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error {
		var vars envFlag
		fs.Var(&vars, "env", "an environment variable for the module's activities, as `KEY=VALUE` (repeatable)")
		envClear := fs.Bool("env-clear", false, "remove the environment the module had")
		return func(ctx context.Context, e *env) error {
			if *envClear && len(vars) > 0 {
				return usagef("--env replaces the whole environment already; --env-clear is for removing it")
			}
			return deploy(ctx, e, vars, *envClear)
		}
	},
}

// envFlag collects repeated --env KEY=VALUE flags.
type envFlag []string

func (f *envFlag) String() string { return strings.Join(*f, " ") }

func (f *envFlag) Set(kv string) error {
	if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
		return fmt.Errorf("%q is not of the form KEY=VALUE", kv)
	}
	*f = append(*f, kv)
	return nil
}

func deploy(ctx context.Context, e *env, vars []string, envClear bool) error {
	wasm, err := os.ReadFile(e.args[0])
	if err != nil {
		return fmt.Errorf("durabox: deploy: %w", err)
	}
	var m api.Module
	if len(vars) > 0 || envClear {
		m, err = e.client.DeployWithEnv(ctx, wasm, vars)
	} else {
		m, err = e.client.Deploy(ctx, wasm)
	}
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, m)
	}
	line := fmt.Sprintf("deployed %s  orchestrations: %s  activities: %s", shortHash(m.Hash), names(m.Orchestrations), names(m.Activities))
	if len(m.EnvKeys) > 0 {
		line += "  env: " + strings.Join(m.EnvKeys, ", ")
	}
	_, err = fmt.Fprintln(e.stdout, line)
	return err
}
