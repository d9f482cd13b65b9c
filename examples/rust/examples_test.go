// Package rust_test runs the Rust examples (examples/rust, built with
// guest-sdk/rust/build.sh) on a host on each runtime, and their Go twins
// (examples/wasm) the same way, and finds the same results and the same
// histories: the same events, names, inputs and results, byte for byte.
package rust_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/replaytest"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/testhost"
)

func TestMain(m *testing.M) {
	code := m.Run()
	guestbuild.Cleanup()
	os.Exit(code)
}

// runner is a host on a fresh SQLite file, running until the test ends.
type runner struct {
	*host.Host
	t *testing.T
}

func newRunner(t *testing.T, runtime string, wasm []byte) *runner {
	t.Helper()
	return &runner{Host: testhost.Start(t, host.Options{Runtime: runtime}, wasm), t: t}
}

func (r *runner) start(name, id, input string) {
	r.t.Helper()
	if _, err := r.Start(context.Background(), name, json.RawMessage(input), id); err != nil {
		r.t.Fatal(err)
	}
}

// finish waits for the instance to end and checks its result.
func (r *runner) finish(id, want string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inst, err := r.Wait(ctx, id)
	if err != nil {
		r.t.Fatal(err)
	}
	if inst.Status != engine.StatusCompleted || string(inst.Result) != want {
		r.t.Fatalf("instance %s: status %s result %s failure %+v; want result %s", id, inst.Status, inst.Result, inst.Failure, want)
	}
}

// until waits, for a minute at most, until the instance's history holds
// an event of kind.
func (r *runner) until(id string, kind engine.EventKind) {
	r.t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		events, err := r.History(context.Background(), id)
		if err != nil && !errors.Is(err, api.ErrNotFound) {
			r.t.Fatal(err)
		}
		if slices.ContainsFunc(events, func(e engine.Event) bool { return e.Kind == kind }) {
			return
		}
	}
	r.t.Fatalf("instance %s never recorded %s", id, kind)
}

func (r *runner) query(id, name, want string) {
	r.t.Helper()
	got, err := r.Query(context.Background(), id, name, nil)
	if err != nil || string(got) != want {
		r.t.Fatalf("query %s of %s: %s, %v; want %s", name, id, got, err, want)
	}
}

// history returns the instance's history as one line per event, without
// the times (each host has its own clock): kind, names, inputs, results,
// failures and the events they complete, as JSON. A run of completions
// of activities is sorted, without their ids, since which finishes first
// is the activity workers' race, not the orchestration's.
func (r *runner) history(id string) []string {
	r.t.Helper()
	events, err := r.History(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	var lines []string
	run := 0
	for i, e := range events {
		e.Time, e.FireAt = time.Time{}, nil
		if e.Kind == engine.ActivityCompleted {
			e.ID = 0
		}
		b, err := json.Marshal(e)
		if err != nil {
			r.t.Fatal(err)
		}
		lines = append(lines, string(b))
		if e.Kind != engine.ActivityCompleted {
			run = i + 1
		}
		slices.Sort(lines[run:])
	}
	return lines
}

// example is one example's instances: run starts and drives them on r to
// their ends, checking what they answer; ids are the instances it starts.
type example struct {
	name string
	ids  []string
	run  func(r *runner)
}

var examples = []example{
	{"hello", []string{"hello-1"}, func(r *runner) {
		r.start("Greeting", "hello-1", `"world"`)
		r.finish("hello-1", `"Hello, world!"`)
	}},
	{"approval", []string{"approved", "expired"}, func(r *runner) {
		r.start("Approval", "approved", `{"item": "laptop", "timeout": "1h"}`)
		r.until("approved", engine.ExternalSubscribed)
		if inst, err := r.Instance(context.Background(), "approved"); err != nil || inst.CustomStatus != "waiting for a decision on laptop" {
			r.t.Fatalf("custom status %q, %v", inst.CustomStatus, err)
		}
		r.query("approved", "Decision", "null")
		if err := r.Raise(context.Background(), "approved", "Approval", json.RawMessage(`{"approved": true, "by": "ada"}`), false); err != nil {
			r.t.Fatal(err)
		}
		r.finish("approved", `"laptop approved by ada"`)
		r.query("approved", "Decision", `{"approved":true,"by":"ada"}`)
		r.start("Approval", "expired", `{"item": "chair", "timeout": "100ms"}`)
		r.finish("expired", `"chair: no decision in 100ms, request expired"`)
	}},
	{"fanout", []string{"fanout-1"}, func(r *runner) {
		r.start("WordCount", "fanout-1", `["one two three four five six seven eight", "nine ten", "eleven"]`)
		r.finish("fanout-1", `11`)
	}},
}

// TestRustExamplesMatchGo runs each example's Go module on wazero and its
// Rust module on each runtime, and compares their histories.
func TestRustExamplesMatchGo(t *testing.T) {
	t.Parallel()
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			rust := guestbuild.RustWasm(t, "examples/rust/"+ex.name+"/lib.rs")
			goWasm, err := guestbuild.Wasm("examples/wasm/" + ex.name)
			if err != nil {
				t.Fatal(err)
			}
			g := newRunner(t, host.RuntimeWazero, goWasm)
			ex.run(g)
			for _, rt := range host.Runtimes {
				t.Run(rt, func(t *testing.T) {
					r := newRunner(t, rt, rust)
					ex.run(r)
					for _, id := range ex.ids {
						if got, want := r.history(id), g.history(id); !slices.Equal(got, want) {
							t.Errorf("instance %s: the Rust module's history differs from the Go module's\nRust:\n%s\nGo:\n%s",
								id, strings.Join(got, "\n"), strings.Join(want, "\n"))
						}
					}
				})
			}
		})
	}
}

// TestRustExamplesReplayGoHistories replays the histories the Go examples
// keep (examples/wasm/*/testdata/histories, recorded by hosts running the
// Go modules) on the Rust modules: they reproduce every command, byte for
// byte.
func TestRustExamplesReplayGoHistories(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"hello", "approval"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rust := guestbuild.RustWasm(t, "examples/rust/"+name+"/lib.rs")
			replaytest.ReplayDir(t, rust, filepath.Join("..", "wasm", name, "testdata", "histories"))
		})
	}
}

// TestRustUnitTests runs the crate's own tests (its codec, JSON,
// executor and runtime, driven by activations as a host drives them) and
// the approval example's, natively, built with rustc --test.
func TestRustUnitTests(t *testing.T) {
	t.Parallel()
	guestbuild.RustModule(t, "examples/rust/hello/lib.rs") // skips or fails, saying why, without a toolchain
	rustc := os.Getenv("DURABOX_RUSTC")
	if rustc == "" {
		rustc = "/usr/bin/rustc"
	}
	dir := t.TempDir()
	sdk := filepath.Join("..", "..", "guest-sdk", "rust", "src", "lib.rs")
	rlib := filepath.Join(dir, "libdurabox.rlib")
	rustcRun(t, rustc, "--crate-type", "rlib", "--crate-name", "durabox", sdk, "-o", rlib)
	for name, args := range map[string][]string{
		"sdk":      {"--crate-name", "durabox", sdk},
		"approval": {"--crate-name", "approval", "--extern", "durabox=" + rlib, filepath.Join("approval", "lib.rs")},
	} {
		bin := filepath.Join(dir, name)
		rustcRun(t, rustc, append(append([]string{"--test"}, args...), "-o", bin)...)
		out, err := exec.Command(bin).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "test result: ok") {
			t.Fatalf("the tests of %s: %v\n%s", name, err, out)
		}
		t.Logf("the tests of %s:\n%s", name, out)
	}
}

// rustcRun runs rustc with args for the host's own target, and fails t
// with its output if it fails.
func rustcRun(t *testing.T, rustc string, args ...string) {
	t.Helper()
	cmd := exec.Command(rustc, append([]string{"--edition", "2021"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}
