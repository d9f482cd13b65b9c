package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

var deployCommand = &command{
	name:     "deploy",
	synopsis: "FILE.wasm",
	summary:  "deploy a module to the host",
	about: "Send the module FILE.wasm to the host, which checks it and keeps it, and print\n" +
		"what it registers. New instances of its orchestrations run on it.",
	args:   []string{"FILE.wasm"},
	client: true,
	define: func(fs *flag.FlagSet) func(context.Context, *env) error { return deploy },
}

func deploy(ctx context.Context, e *env) error {
	wasm, err := os.ReadFile(e.args[0])
	if err != nil {
		return fmt.Errorf("durabox: deploy: %w", err)
	}
	m, err := e.client.Deploy(ctx, wasm)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, m)
	}
	_, err = fmt.Fprintf(e.stdout, "deployed %s  orchestrations: %s  activities: %s\n", shortHash(m.Hash), names(m.Orchestrations), names(m.Activities))
	return err
}
