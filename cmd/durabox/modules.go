package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
)

var modulesCommand = &command{
	name:     "modules",
	synopsis: "[rm HASH]",
	summary:  "list the modules, or remove one",
	about: "List the deployed modules, newest first, with the orchestrations each registers,\n" +
		"its instances per status and the names of the environment variables deployed\n" +
		"with it (never their values); of a module the host cannot run (another host\n" +
		"deployed it), say why: its instances wait for a host that can. With rm, remove\n" +
		"the module HASH (its first digits will do), which no instance may run on,\n" +
		"finished ones included: purge them first. New instances of its orchestrations\n" +
		"then run on the newest module left.",
	optional: []string{"rm", "HASH"},
	client:   true,
	define:   func(fs *flag.FlagSet) func(context.Context, *env) error { return modules },
}

func modules(ctx context.Context, e *env) error {
	switch {
	case len(e.args) == 0:
		return listModules(ctx, e)
	case e.args[0] != "rm":
		return usagef("unexpected argument %q; did you mean rm?", e.args[0])
	case len(e.args) == 1:
		return usagef("missing HASH: say which module to remove")
	}
	m, err := findModule(ctx, e, "HASH", e.args[1])
	if err != nil {
		return err
	}
	if err := e.client.RemoveModule(ctx, m.Hash); err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, api.RemovedResponse{Hash: m.Hash})
	}
	_, err = fmt.Fprintf(e.stdout, "removed %s  orchestrations: %s\n", shortHash(m.Hash), names(m.Orchestrations))
	return err
}

func listModules(ctx context.Context, e *env) error {
	mods, err := e.client.Modules(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, api.ModulesResponse{Modules: mods})
	}
	if len(mods) == 0 {
		_, err := fmt.Fprintln(e.stdout, "no modules; deploy one with `durabox deploy FILE.wasm`")
		return err
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "HASH\tDEPLOYED\tORCHESTRATIONS\tINSTANCES\tENV")
	for _, m := range mods {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", shortHash(m.Hash), timeText(m.DeployedAt), names(m.Orchestrations), counts(m.Instances), names(m.EnvKeys))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range mods {
		if m.Refused != "" {
			if _, err := fmt.Fprintf(e.stdout, "%s; its instances and activities wait for a host that can run it\n", m.Refused); err != nil {
				return err
			}
		}
	}
	return nil
}

// counts shows instances per status to people, in the order of an
// instance's life.
func counts(byStatus map[engine.Status]int) string {
	var parts []string
	for _, s := range engine.Statuses() {
		if n := byStatus[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// findModule returns the deployed module whose hash begins with prefix,
// which what (a flag or an argument) gave.
func findModule(ctx context.Context, e *env, what, prefix string) (api.Module, error) {
	mods, err := e.client.Modules(ctx)
	if err != nil {
		return api.Module{}, err
	}
	var found []api.Module
	for _, m := range mods {
		if strings.HasPrefix(m.Hash, strings.ToLower(prefix)) {
			found = append(found, m)
		}
	}
	switch {
	case prefix == "":
		return api.Module{}, usagef("%s is empty; give a module's hash", what)
	case len(found) == 0:
		return api.Module{}, fmt.Errorf("durabox: no deployed module has a hash that begins with %q (%s); `durabox modules` lists them", prefix, what)
	case len(found) > 1:
		return api.Module{}, fmt.Errorf("durabox: %d modules have a hash that begins with %q (%s); give more of it", len(found), prefix, what)
	}
	return found[0], nil
}
