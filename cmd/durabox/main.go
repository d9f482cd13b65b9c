// Command durabox starts and builds Durabox modules, runs a Durabox host and
// talks to it.
//
//	durabox new orders && cd orders
//	durabox build
//	durabox serve --db durabox.db &
//	durabox deploy orders.wasm
//	durabox start Orders --input '"world"' --wait
//
// Run durabox without arguments for the list of commands.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// commands are durabox's commands, in the order the overview lists them.
var commands = []*command{newCommand, buildCommand, checkCommand, conformanceCommand, serveCommand, checkDBCommand, backupCommand, restoreCommand, deployCommand, modulesCommand, startCommand, raiseCommand, queryCommand, updateCommand, completeCommand, cancelCommand, terminateCommand, purgeCommand, statusCommand, historyCommand, listCommand,
	upgradeCommand, replayCommand, exportCommand, resetCommand, scheduleCommand, batchCommand, auditCommand, versionCommand}

// run runs durabox with args and returns its exit code: 0 for success, 1
// for a failure, 2 for a usage error (and 3 for an upgrade that leaves
// instances where they were).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		overview(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(args[1:], stdout, stderr)
	}
	cmd := find(args[0])
	if cmd == nil {
		fmt.Fprintf(stderr, "durabox: unknown command %q\n\n", args[0])
		overview(stderr)
		return 2
	}
	return cmd.run(args[1:], stdin, stdout, stderr)
}

func find(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// help prints the overview, or the usage of the command args names.
func help(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		overview(stdout)
		return 0
	case len(args) > 1:
		fmt.Fprintf(stderr, "durabox help: name one command, not %d\n", len(args))
		return 2
	}
	cmd := find(args[0])
	if cmd == nil {
		fmt.Fprintf(stderr, "durabox help: unknown command %q\n\n", args[0])
		overview(stderr)
		return 2
	}
	cmd.usage(stdout)
	return 0
}

func overview(w io.Writer) {
	fmt.Fprint(w, "Durabox runs durable orchestrations, written in Go and compiled to WebAssembly.\n\nusage:\n")
	tw := newTable(w)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.line(), c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
Every command but new, build, check, conformance, serve, check-db, backup and
restore (and replay of a bundle, and version without --host) talks to the host at --addr ADDR, else $DURABOX_ADDR, else `+defaultAddr+`, sends the token
of --token-file, else $DURABOX_TOKEN, and prints JSON with --json.
Run 'durabox help COMMAND' for the details of a command.
`)
}
