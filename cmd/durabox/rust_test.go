package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestRustExamplesThroughTheCLI runs the Rust examples (examples/rust)
// through the real command line and durabox serve processes, on each
// runtime: deploy, start, an approval killed with SIGKILL while it waits,
// the host started again, raise, finish; then durabox replay of each
// history on the host, and of its exported bundle offline, on the Rust
// module and on the Go module of the same example, which reproduces the
// Rust module's history event for event.
func TestRustExamplesThroughTheCLI(t *testing.T) {
	t.Parallel()
	rust := map[string]string{}
	for _, name := range []string{"hello", "approval", "fanout"} {
		rust[name] = guestbuild.RustModule(t, "examples/rust/"+name+"/lib.rs")
	}
	for _, rt := range host.Runtimes {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "durabox.db")
			s := startServerAt(t, db, "127.0.0.1:0", "--runtime", rt)
			cli := func(args ...string) string {
				t.Helper()
				code, stdout, stderr := durabox(append(args, "--addr", s.addr)...)
				if code != 0 {
					t.Fatalf("durabox %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
				}
				return stdout
			}
			for _, name := range []string{"hello", "approval", "fanout"} {
				if out := cli("deploy", rust[name]); !strings.HasPrefix(out, "deployed ") {
					t.Fatalf("durabox deploy %s: %s", name, out)
				}
			}
			if got, want := cli("start", "Greeting", "--id", "hello-1", "--input", `"world"`, "--wait"), "hello-1\nCompleted\n\"Hello, world!\"\n"; got != want {
				t.Fatalf("durabox start Greeting: %q, want %q", got, want)
			}
			if got, want := cli("start", "WordCount", "--id", "fanout-1", "--input", `["a b c", "d e", "f"]`, "--wait"), "fanout-1\nCompleted\n6\n"; got != want {
				t.Fatalf("durabox start WordCount: %q, want %q", got, want)
			}

			cli("start", "Approval", "--id", "order", "--input", `{"item": "laptop", "timeout": "1h"}`)
			waitingForApproval(t, s.client(), "order")
			if got := cli("query", "order", "Decision"); got != "null\n" {
				t.Fatalf("durabox query order Decision while waiting: %q, want null", got)
			}
			s.kill(t)
			s = startServerAt(t, db, "127.0.0.1:0", "--runtime", rt)
			cli("raise", "order", "Approval", "--data", `{"approved": true, "by": "ada"}`)
			inst, err := s.client().Wait(context.Background(), "order")
			if err != nil {
				t.Fatal(err)
			}
			if inst.Status != engine.StatusCompleted || string(inst.Result) != `"laptop approved by ada"` {
				t.Fatalf("after the kill: status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
			}
			events, err := s.client().History(context.Background(), "order")
			if err != nil {
				t.Fatal(err)
			}
			checkHistory(t, events)
			const want = "OrchestrationStarted ActivityScheduled ActivityCompleted CustomStatusSet ExternalSubscribed TimerCreated ExternalEvent TimerCancelled ActivityScheduled ActivityCompleted OrchestrationCompleted"
			if got := kindsOf(events); got != want {
				t.Fatalf("history:\n got %s\nwant %s", got, want)
			}

			for id, example := range map[string]string{"hello-1": "hello", "order": "approval", "fanout-1": "fanout"} {
				if got := cli("replay", id); !strings.HasPrefix(got, "ok: module ") {
					t.Fatalf("durabox replay %s: %s", id, got)
				}
				bundle := filepath.Join(t.TempDir(), id+".dbx")
				cli("export", id, "-o", bundle)
				goWasm, err := guestbuild.Build("examples/wasm/" + example)
				if err != nil {
					t.Fatal(err)
				}
				for _, module := range []string{rust[example], goWasm} {
					code, stdout, stderr := durabox("replay", bundle, "--module", module)
					if code != 0 || !strings.Contains(stdout, "\nok: module ") {
						t.Fatalf("durabox replay %s --module %s: exit %d\n%s%s", bundle, module, code, stdout, stderr)
					}
				}
			}
		})
	}
}
