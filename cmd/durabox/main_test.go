package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/client/fakehost"
	"github.com/durabox/durabox/host/server"
)

// durabox runs the command line with args and returns its exit code and
// output.
func durabox(args ...string) (code int, stdout, stderr string) {
	return duraboxWithStdin(strings.NewReader(""), args...)
}

// duraboxWithStdin runs the command line with args, reading stdin.
func duraboxWithStdin(stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, stdin, &out, &errOut)
	return code, out.String(), errOut.String()
}

// hash is the sha256 of "\x00asm fake", the module the fixture deploys.
const hash = "5c471d4fcbf930ec41c5276151aa1d4572fe3176288e2a0a117f9b677c4e1bc5"

// newHost returns a fake host behind the real handler, and its address.
// Unless empty, the fake has a module deployed (at 03:04:06) and the
// instance "done", Greeting("world"), completed (at 03:04:07 and 08).
func newHost(t *testing.T, empty bool) (*fakehost.Host, string) {
	t.Helper()
	h := fakehost.New(map[string]fakehost.Orchestration{
		"Greeting": fakehost.Greeting,
		"Fails": func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("boom")
		},
	})
	if !empty {
		ctx := context.Background()
		if _, err := h.Deploy(ctx, []byte("\x00asm fake")); err != nil {
			t.Fatal(err)
		}
		startAndWait("Greeting", `"world"`, "done")(t, h)
	}
	srv := httptest.NewServer(h.Handler(server.Options{}))
	t.Cleanup(srv.Close)
	return h, srv.Listener.Addr().String()
}

// startAndWait returns a setup that runs an instance to its end.
func startAndWait(name, input, id string) func(*testing.T, *fakehost.Host) {
	return func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		ctx := context.Background()
		if _, err := h.Start(ctx, name, json.RawMessage(input), id); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Wait(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
}

// cliTest is a run of the command line against a fake host.
type cliTest struct {
	name string
	// empty means a host with nothing deployed; setup changes the host.
	empty bool
	setup func(*testing.T, *fakehost.Host)
	// args are the arguments; --addr and the host's address follow the
	// command's name.
	args []string
	// stdin is what the command reads on stdin.
	stdin      string
	wantCode   int
	wantStdout string
	// wantStderr is the whole of stderr; with wantUsage, its first line.
	wantStderr string
	// wantUsage means stderr ends with the command's usage.
	wantUsage bool
	check     func(*testing.T, *fakehost.Host)
}

func runTests(t *testing.T, tests []cliTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			h, addr := newHost(t, tt.empty)
			if tt.setup != nil {
				tt.setup(t, h)
			}
			args := append([]string{tt.args[0], "--addr", addr}, tt.args[1:]...)
			code, stdout, stderr := duraboxWithStdin(strings.NewReader(tt.stdin), args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if stdout != tt.wantStdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tt.wantStdout)
			}
			wantStderr := tt.wantStderr
			if tt.wantUsage {
				wantStderr += "\n" + usage(t, tt.args[0])
			}
			if stderr != wantStderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, wantStderr)
			}
			if tt.check != nil {
				tt.check(t, h)
			}
		})
	}
}

// usage returns what durabox help prints for the command.
func usage(t *testing.T, command string) string {
	t.Helper()
	code, stdout, stderr := durabox("help", command)
	if code != 0 || stderr != "" {
		t.Fatalf("durabox help %s: exit code %d, stderr %q", command, code, stderr)
	}
	return stdout
}

const overviewText = `Durabox runs durable orchestrations, written in Go and compiled to WebAssembly.

usage:
  durabox new DIR [--name NAME] [--module PATH] [--sdk DIR]                                     start a project: a module, its tests, a README
  durabox build [DIR] [-o FILE]                                                                 build a module and check it as a host will
  durabox check FILE.wasm                                                                       check a module as a host will, on each runtime
  durabox conformance FILE.wasm [--runtime wazero|wasmtime|both] [--run REGEXP]                 run the guest conformance kit on a module built with any SDK
  durabox serve --db FILE|URL [--addr ADDR] [--token-file FILE] [flags]                         run a host on a SQLite file, or one of several on PostgreSQL
  durabox check-db --db FILE|URL [--json]                                                       check a database for damage, changing nothing
  durabox backup --db FILE -o COPY                                                              copy a SQLite database, consistently, while a host serves it
  durabox restore --from COPY --db FILE                                                         put a backup in place of a SQLite database
  durabox deploy FILE.wasm [--env KEY=VALUE]... [--env-clear]                                   deploy a module to the host
  durabox modules [rm HASH]                                                                     list the modules, or remove one
  durabox start NAME [--input JSON|-] [--id ID] [--raise EVENT|--update NAME] [--wait] [flags]  start an orchestration instance
  durabox raise ID NAME [--data JSON|-] [--data-file FILE] [--persistent]                       raise an external event for an instance
  durabox query ID NAME [--data JSON|-] [--data-file FILE]                                      ask an instance a query its orchestration handles
  durabox update ID NAME [--data JSON|-] [--data-file FILE] [--update-id UID]                   send an instance an update its orchestration handles, and print the answer
  durabox complete TOKEN [--result JSON|-] [--result-file FILE] [--fail MESSAGE [--type TYPE]]  complete an activity that waits for its outcome from outside
  durabox cancel ID [--reason TEXT]                                                             cancel an instance
  durabox terminate ID [--reason TEXT]                                                          end an instance now, without its cooperation
  durabox purge [ID] [--status STATUS] [--before T] [flags]                                     delete finished instances and their histories
  durabox status ID                                                                             show an instance
  durabox history ID [--execution N]                                                            show an instance's history
  durabox list [--status STATUS] [--limit N] [flags]                                            list the instances
  durabox upgrade FROM [TO] [--dry-run] [--instances IDS] [--parallel N]                        move the open instances of a module to a new one that replays them
  durabox replay ID|FILE.dbx [--module HASH|FILE.wasm] [--execution N]                          check that code reproduces an instance's history
  durabox export ID [-o FILE]                                                                   write an instance's repro bundle
  durabox reset ID --to-event N [--module HASH] [--dry-run]                                     run an instance again from an event of its history, on new code
  durabox schedule create|list|show|pause|resume|trigger|delete [NAME] [flags]                  run an orchestration on a schedule
  durabox batch cancel|terminate|raise|reset|upgrade|list|show|stop [ID] [flags]                act on every instance a filter selects: cancel, terminate, raise, reset, upgrade
  durabox audit [--token NAME] [--action ACTION] [--target ID] [--since T] [flags]              list who changed what through the API, and when
  durabox version [--host]                                                                      print what durabox, or the host, was built from

Every command but new, build, check, conformance, serve, check-db, backup and
restore (and replay of a bundle, and version without --host) talks to the host at --addr ADDR, else $DURABOX_ADDR, else 127.0.0.1:7070, sends the token
of --token-file, else $DURABOX_TOKEN, and prints JSON with --json.
Run 'durabox help COMMAND' for the details of a command.
`

const startUsage = `usage: durabox start NAME [--input JSON|-] [--id ID] [--raise EVENT|--update NAME] [--wait] [flags] [--addr ADDR] [--json]

Start an instance of the orchestration NAME, on the newest module that
registers it or on the module HASH, and print its id. With --wait, wait for it
to finish, then print its status and its result; unless it completed (it
failed, was canceled or terminated), exit 1. If the host goes away while it
waits (a restart), it asks again until the host answers or --timeout passes.

A large input goes in a file (--input-file) or on stdin (--input -): the command
line holds a few hundred KiB at most. The host takes inputs up to its payload
limit (serve --max-payload-mib, 16 MiB unless set).

With --raise EVENT (and --id), signal with start: the instance starts with the
event EVENT (its data from --data or --data-file, --persistent for a persistent
one) raised at it, in one transaction; if the instance ID exists, the event is
only raised at it, as durabox raise does, and nothing starts. --json says which
("started").

With --update NAME (and --id), update with start: the instance starts with the
update NAME (its argument from --data or --data-file, its id from --update-id)
sent to it, in one transaction, and the command prints the update's answer, as
durabox update does; if the instance ID exists, the update is only sent to it.

  --addr ADDR        the host's ADDR, as host:port or a URL such as https://host:port (default $DURABOX_ADDR, else 127.0.0.1:7070)
  --data JSON        with --raise or --update, the event's data or the update's argument, as JSON; - reads it from stdin (default null)
  --data-file FILE   with --raise or --update, read the event's data or the update's argument, as JSON, from FILE
  --id ID            the new instance's ID (default: the host picks one)
  --input JSON       the orchestration's input, as JSON; - reads it from stdin (default null)
  --input-file FILE  read the orchestration's input, as JSON, from FILE
  --json             print JSON, for scripts
  --module HASH      start it on the module HASH, or a unique prefix, which must register NAME (default: the newest that does)
  --persistent       with --raise, raise a persistent event
  --raise EVENT      raise the event EVENT at the instance, starting it only if it does not exist (needs --id)
  --timeout D        with --wait, give up waiting after D, such as 10m (default: wait as long as it takes)
  --tls-ca FILE      trust the certificate authorities in the PEM FILE for an https host, which an --addr without a scheme then is (default the system's)
  --token-file FILE  send the token in FILE to the host (default $DURABOX_TOKEN, if set)
  --update NAME      send the update NAME to the instance, starting it only if it does not exist (needs --id), and print its answer
  --update-id UID    with --update, the update's id, UID, unique in the instance (default: a new one)
  --wait             wait for the instance to finish
`

func TestHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"no arguments", nil, 2, "", overviewText},
		{"help", []string{"help"}, 0, overviewText, ""},
		{"-h", []string{"-h"}, 0, overviewText, ""},
		{"--help", []string{"--help"}, 0, overviewText, ""},
		{"help with a command", []string{"help", "start"}, 0, startUsage, ""},
		{"a command's -h", []string{"start", "-h"}, 0, startUsage, ""},
		{"a command's --help", []string{"start", "Greeting", "--help"}, 0, startUsage, ""},
		{"help with an unknown command", []string{"help", "nope"}, 2, "", "durabox help: unknown command \"nope\"\n\n" + overviewText},
		{"help with two commands", []string{"help", "start", "list"}, 2, "", "durabox help: name one command, not 2\n"},
		{"an unknown command", []string{"launch"}, 2, "", "durabox: unknown command \"launch\"\n\n" + overviewText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := durabox(tt.args...)
			if code != tt.wantCode || stdout != tt.wantStdout || stderr != tt.wantStderr {
				t.Errorf("got exit code %d, stdout:\n%s\nstderr:\n%s\nwant exit code %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

func TestEveryCommandHasUsage(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			u := usage(t, c.name)
			if !strings.HasPrefix(u, "usage: "+c.line()) || strings.Contains(u, "\n\n\n") {
				t.Errorf("usage:\n%s", u)
			}
		})
	}
}

// Not parallel: it runs in a directory of its own (t.Chdir).
func TestHostNotRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Chdir(t.TempDir())
	if err := os.WriteFile("m.wasm", []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		op   string
	}{
		{[]string{"deploy", "m.wasm"}, "deploy"},
		{[]string{"start", "Greeting"}, "start"},
		{[]string{"start", "Greeting", "--wait"}, "start"},
		{[]string{"status", "x"}, "get instance"},
		{[]string{"purge", "x"}, "purge"},
		{[]string{"history", "x"}, "history"},
		{[]string{"list"}, "list instances"},
		{[]string{"upgrade", "Flow"}, "upgrade"},
		{[]string{"replay", "x"}, "replay"},
		{[]string{"export", "x"}, "export"},
		{[]string{"reset", "x", "--to-event", "1"}, "reset"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append([]string{tt.args[0], "--addr", addr}, tt.args[1:]...)
			code, stdout, stderr := durabox(args...)
			want := "durabox: " + tt.op + ": no host is running at " + addr + "; start one with `durabox serve --db FILE`\n"
			if code != 1 || stdout != "" || stderr != want {
				t.Errorf("got exit code %d, stdout %q, stderr %q; want 1, nothing, %q", code, stdout, stderr, want)
			}
		})
	}
}

// Not parallel: it sets $DURABOX_ADDR (t.Setenv).
func TestAddrFromTheEnvironment(t *testing.T) {
	_, addr := newHost(t, false)
	tests := []struct{ name, env, want string }{
		{"host:port", addr, "done"},
		{"URL", "http://" + addr, "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DURABOX_ADDR", tt.env)
			code, stdout, stderr := durabox("list")
			if code != 0 || !strings.Contains(stdout, tt.want) || stderr != "" {
				t.Errorf("got exit code %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}

// TestUsageSpellsFlagsAsTyped checks that a command's usage writes a
// one-letter flag with one dash, as its synopsis does, and longer ones with two.
func TestUsageSpellsFlagsAsTyped(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"build", "export"} {
		text := usage(t, command)
		if !strings.Contains(text, "\n  -o FILE") || strings.Contains(text, "--o ") {
			t.Errorf("durabox help %s lists -o wrongly:\n%s", command, text)
		}
	}
	if text := usage(t, "build"); !strings.Contains(text, "\n  --json") {
		t.Errorf("durabox help build lists a long flag with one dash:\n%s", text)
	}
}
