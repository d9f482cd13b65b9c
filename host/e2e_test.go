package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "durabox-compiled-")
	if err != nil {
		panic(err)
	}
	host.TestCacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	guestbuild.Cleanup()
	os.Exit(code)
}

// testHost is a host running on a SQLite file, until stop is called or
// the test ends.
type testHost struct {
	*host.Host
	st   *sqlite.Store
	stop func()
}

// startHost runs a host with opts on a fresh SQLite file, which reports
// its commits to opts.Metrics, if set.
func startHost(t *testing.T, opts host.Options) *testHost {
	t.Helper()
	var storeOpts sqlite.Options
	if opts.Metrics != nil {
		storeOpts.OnCommit = opts.Metrics.ObserveCommit
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), storeOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return startHostOn(t, st, opts)
}

// startHostFetching runs a host as startHost does, on a store that hands
// it none of the work it makes (not a store.Handoff): it fetches every
// turn and every task, as a host did before the handoffs.
func startHostFetching(t *testing.T, opts host.Options) *testHost {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return runHost(t, st, struct{ store.Store }{st}, opts)
}

// startHostOn runs a host with opts on st, which the test closes.
func startHostOn(t *testing.T, st *sqlite.Store, opts host.Options) *testHost {
	return runHost(t, st, st, opts)
}

// runHost runs a host with opts on via, which is st or a wrapper of it,
// until stop is called or the test ends; it leaves st open.
func runHost(t *testing.T, st *sqlite.Store, via store.Store, opts host.Options) *testHost {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = host.TestCacheDir
	}
	h, err := host.New(via, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("run: %v", err)
				}
			case <-time.After(time.Minute):
				stacks := make([]byte, 1<<22)
				stacks = stacks[:runtime.Stack(stacks, true)]
				t.Fatalf("Run did not return within a minute of its context ending; every goroutine:\n%s", stacks)
			}
			h.Close()
		})
	}
	t.Cleanup(stop)
	return &testHost{Host: h, st: st, stop: stop}
}

func (h *testHost) deploy(t *testing.T, pkg string, vars ...string) store.ModuleInfo {
	t.Helper()
	wasm, err := guestbuild.Wasm(pkg, vars...)
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Deploy(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// run starts an orchestration and waits for it to finish.
func (h *testHost) run(t *testing.T, name, input string) store.Instance {
	t.Helper()
	return h.wait(t, h.start(t, name, input))
}

func (h *testHost) start(t *testing.T, name, input string) string {
	t.Helper()
	id, err := h.Start(context.Background(), name, json.RawMessage(input), "")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wait waits for an instance to finish, for a minute at most.
func (h *testHost) wait(t *testing.T, id string) store.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inst, err := h.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !inst.Status.IsTerminal() {
		t.Fatalf("instance %s of %s still %s after 60s", id, inst.Name, inst.Status)
	}
	return inst
}

func (h *testHost) history(t *testing.T, id string) []engine.Event {
	t.Helper()
	events, err := h.History(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// shape describes a history as kind(name) lines, the way a test states it.
func shape(events []engine.Event) []string {
	var out []string
	for i, e := range events {
		s := string(e.Kind)
		if e.Name != "" {
			s += "(" + e.Name + ")"
		}
		if e.ID != int64(i+1) {
			s += " with a bad id"
		}
		out = append(out, s)
	}
	return out
}

func TestHelloEndToEnd(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	info := h.deploy(t, "examples/wasm/hello")
	if !reflect.DeepEqual(info.Orchestrations, []string{"Greeting"}) || !reflect.DeepEqual(info.Activities, []string{"SayHello"}) {
		t.Fatalf("deployed %+v", info)
	}
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		t.Fatal(err)
	}
	report, err := host.CheckModule(context.Background(), wasm, []string{host.RuntimeWazero})
	if err == nil {
		err = report.Err()
	}
	m := report.Manifest
	if err != nil || !reflect.DeepEqual(m.Orchestrations, info.Orchestrations) || !reflect.DeepEqual(m.Activities, info.Activities) || m.SDK != "durabox-go/0.1" {
		t.Fatalf("Check: %+v, %v; deployed %+v", m, err, info)
	}
	inst := h.run(t, "Greeting", `"world"`)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `"Hello, world!"` {
		t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
	if inst.ModuleHash != info.Hash {
		t.Errorf("instance ran on module %s, deployed %s", inst.ModuleHash, info.Hash)
	}
	events := h.history(t, inst.ID)
	want := []string{"OrchestrationStarted(Greeting)", "ActivityScheduled(SayHello)", "ActivityCompleted", "OrchestrationCompleted"}
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	if string(events[1].Input) != `"world"` || events[2].ScheduleID != 2 || string(events[2].Result) != `"Hello, world!"` {
		t.Errorf("history details: %+v", events)
	}
}

func TestRetryEndToEnd(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/retry")
	inst := h.run(t, "Retry", `{"failures": 1, "delay": "50ms"}`)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `"succeeded on attempt 2"` {
		t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
	}
	events := h.history(t, inst.ID)
	want := []string{
		"OrchestrationStarted(Retry)", "ActivityScheduled(FlakyTask)", "ActivityFailed", "TimerCreated",
		"TimerFired", "ActivityScheduled(FlakyTask)", "ActivityCompleted", "OrchestrationCompleted",
	}
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
	if msg := events[2].Failure.Message; msg != "attempt 1 failed on purpose" {
		t.Errorf("first attempt failed with %q", msg)
	}
	// The timer is due 50ms after the logical time of the failure that
	// started it, and fires no earlier.
	if d := events[3].FireAt.Sub(events[2].Time); d != 50*time.Millisecond {
		t.Errorf("timer due %s after the failure, want 50ms", d)
	}
	if events[4].Time.Before(*events[3].FireAt) || events[4].ScheduleID != 4 {
		t.Errorf("timer fired at %s (schedule %d), due %s", events[4].Time, events[4].ScheduleID, events[3].FireAt)
	}
}

func TestRetryGivesUp(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/retry")
	inst := h.run(t, "Retry", `{"attempts": 2, "failures": 5, "delay": "10ms"}`)
	if inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != "all 2 attempts failed" {
		t.Fatalf("status %s failure %+v", inst.Status, inst.Failure)
	}
	if got := h.history(t, inst.ID); got[len(got)-1].Kind != engine.OrchestrationFailed {
		t.Fatalf("history ends with %s", got[len(got)-1].Kind)
	}
}

func TestFailingGuestsFailOnlyTheirOwnInstance(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/crashy")
	tests := []struct {
		name, orchestration, input string
		wantMessage                string
		wantDetails                string
	}{
		{"panic", "Panic", `"kaboom"`, "panic: kaboom", "main.go"},
		{"deadlock", "Deadlock", `null`, "orchestration crashed applying event 1: it deadlocked: every goroutine is blocked; an orchestration may wait only on the SDK's futures (activities, timers, events, children, branches started with ctx.Go), never on a channel, a mutex or a WaitGroup: a branch runs only while the others wait on futures", ""},
		{"blocking sleep", "Sleeps", `null`, "orchestration crashed applying event 1: the orchestration blocked on time.Sleep or a timer of the time package, which would not survive a restart; use ctx.Sleep or ctx.NewTimer, the SDK's durable timers (it waited 10ms)", ""},
		{"activity panic", "CallPanickyActivity", `null`, `activity "PanickyActivity" failed: panic: activity went wrong`, "main.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := h.run(t, tt.orchestration, tt.input)
			if inst.Status != engine.StatusFailed || inst.Failure == nil {
				t.Fatalf("status %s failure %+v", inst.Status, inst.Failure)
			}
			if inst.Failure.Message != tt.wantMessage {
				t.Errorf("message %q, want %q", inst.Failure.Message, tt.wantMessage)
			}
			if !strings.Contains(inst.Failure.Details, tt.wantDetails) {
				t.Errorf("details do not mention %q:\n%s", tt.wantDetails, inst.Failure.Details)
			}
			// The host keeps serving: a healthy instance of the same module
			// completes after the failure.
			healthy := h.run(t, "Echo", `"still here"`)
			if healthy.Status != engine.StatusCompleted || string(healthy.Result) != `"still here"` {
				t.Fatalf("healthy instance: status %s result %s failure %+v", healthy.Status, healthy.Result, healthy.Failure)
			}
		})
	}
}

func TestDeployRefusesWhatIsNotAModule(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	tests := []struct {
		name string
		wasm []byte
		want string
	}{
		{"not wasm", []byte("#!/bin/sh\necho hello\n"), "host: module refused: the file is not a WebAssembly module (it does not start with \\0asm)"},
		{"wasm without imports", []byte("\x00asm\x01\x00\x00\x00"), "host: module refused: it does not import wasi_snapshot_preview1.sched_yield"},
		{"wasm without the SDK", []byte(onlyYield), "host: module refused: it lacks the exports of the Durabox guest SDK (_initialize, durabox_abi_version, durabox_alloc, durabox_describe, durabox_activate, durabox_activity)"},
		{"truncated wasm", []byte("\x00asm\x01\x00\x00\x00\x01\x05"), "host: module refused: "},
	}
	for _, built := range []struct{ name, pkg, want string }{
		{"imports the host lacks", "host/testdata/guests/badimport", "host: module refused: it imports functions the host does not provide: env.mystery, wasi_snapshot_preview2.clock_now"},
		{"another ABI version", "host/testdata/guests/abi2", "host: module refused: it speaks ABI version 2 and this host speaks version 1; rebuild it with a guest SDK for version 1"},
	} {
		wasm, err := guestbuild.Wasm(built.pkg)
		if err != nil {
			t.Fatal(err)
		}
		tests = append(tests, struct {
			name string
			wasm []byte
			want string
		}{built.name, wasm, built.want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Deploy(context.Background(), tt.wasm)
			if !errors.Is(err, api.ErrBadModule) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to start with %q", err, tt.want)
			}
			// CheckModule (what durabox check runs) refuses it with the same words.
			if checkErr := checkOn(t, tt.wasm, host.RuntimeWazero); !errors.Is(checkErr, api.ErrBadModule) || checkErr.Error() != err.Error() {
				t.Errorf("Check: %v; Deploy: %v", checkErr, err)
			}
		})
	}
	mods, err := h.Modules(context.Background())
	if err != nil || len(mods) != 0 {
		t.Fatalf("modules after refusals: %+v, %v", mods, err)
	}
}

func TestStartRefusesBadRequests(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/hello")
	ctx := context.Background()
	if _, err := h.Start(ctx, "Greeting", json.RawMessage(`"x"`), "taken"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, orchestration, input, id string
		wantIs                         error
		want                           string
	}{
		{"unknown orchestration", "Nope", `null`, "", api.ErrUnknownOrchestration, "host: unknown orchestration \"Nope\": no deployed module registers it; deploy one with `durabox deploy FILE.wasm`"},
		{"input not JSON", "Greeting", `world`, "", api.ErrBadInput, "host: bad input: the input is not I-JSON (RFC 7493): invalid character 'w' at start of value at byte 0"},
		{"bad id", "Greeting", `null`, "a/b", api.ErrBadInput, `host: bad input: instance id "a/b" must be 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`},
		{"id taken", "Greeting", `null`, "taken", api.ErrInstanceExists, `host: instance already exists: "taken"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Start(ctx, tt.orchestration, json.RawMessage(tt.input), tt.id)
			if !errors.Is(err, tt.wantIs) || err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
		})
	}
	page, err := h.List(ctx, store.InstanceQuery{})
	if err != nil || len(page.Instances) != 1 {
		t.Fatalf("instances after refusals: %d, %v", len(page.Instances), err)
	}
}

func TestInstancesStayOnTheModuleTheyStartedWith(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v1 := h.deploy(t, "host/testdata/guests/crashy")
	old, err := h.Start(ctx, "Version", json.RawMessage(`"300ms"`), "")
	if err != nil {
		t.Fatal(err)
	}
	// A new version is deployed while the old instance waits on its timer.
	v2 := h.deploy(t, "host/testdata/guests/crashy", "main.version=v2")
	if v1.Hash == v2.Hash {
		t.Fatal("the two versions have the same hash")
	}
	fresh, err := h.Start(ctx, "Version", json.RawMessage(`"0s"`), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ id, hash, want string }{{old, v1.Hash, `"v1"`}, {fresh, v2.Hash, `"v2"`}} {
		inst, err := h.Wait(ctx, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if inst.Status != engine.StatusCompleted || string(inst.Result) != tt.want || inst.ModuleHash != tt.hash {
			t.Errorf("instance %s: status %s result %s module %s; want %s on %s", tt.id, inst.Status, inst.Result, short(inst.ModuleHash), tt.want, short(tt.hash))
		}
	}
}

func short(hash string) string { return hash[:12] }

// deployBenchGuests deploys the hello example and the bench guest on h,
// and returns run, which starts an orchestration and waits for it to
// complete.
func deployBenchGuests(t *testing.T, h *testHost) func(name string, input any) {
	t.Helper()
	ctx := context.Background()
	for _, pkg := range []string{"examples/wasm/hello", "internal/bench/guest"} {
		wasm, err := guestbuild.Wasm(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Deploy(ctx, wasm); err != nil {
			t.Fatal(err)
		}
	}
	return func(name string, input any) {
		t.Helper()
		in, _ := json.Marshal(input)
		id, err := h.Start(ctx, name, in, "")
		if err != nil {
			t.Fatal(err)
		}
		inst, err := h.Wait(ctx, id)
		if err != nil || inst.Status != engine.StatusCompleted {
			t.Fatalf("%s(%v): %s, %v; want it Completed", name, input, inst.Status, err)
		}
	}
}
