package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// overlaid builds the guest at pkg with files (by path, replaced or
// added: go build's -overlay) in place of what is on disk.
func overlaid(t *testing.T, pkg string, files map[string][]byte) []byte {
	t.Helper()
	dir := t.TempDir()
	replace := map[string]string{}
	for path, text := range files {
		temp := filepath.Join(dir, strconv.Itoa(len(replace))+".go")
		if err := os.WriteFile(temp, text, 0o600); err != nil {
			t.Fatal(err)
		}
		replace[path] = temp
	}
	overlay, out := filepath.Join(dir, "overlay.json"), filepath.Join(dir, "guest.wasm")
	b, _ := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err := os.WriteFile(overlay, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := guestbuild.Command(guestbuild.Root(), "./"+pkg, out)
	cmd.Args = slices.Insert(cmd.Args, 2, "-overlay="+overlay)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// withoutYield builds the guest at pkg against a Go runtime whose
// sched_yield is its own, not WASI's (an overlay of the runtime's
// lock_wasip1.go): a module without the sched_yield import, which every
// host refuses.
func withoutYield(t *testing.T, pkg string) []byte {
	t.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src", "runtime", "lock_wasip1.go")
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const decl = "//go:wasmimport wasi_snapshot_preview1 sched_yield\nfunc sched_yield() errno\n"
	if !bytes.Contains(code, []byte(decl)) {
		t.Fatalf("%s no longer declares %q", src, decl)
	}
	wasm := overlaid(t, pkg, map[string][]byte{src: bytes.Replace(code, []byte(decl), []byte("func sched_yield() errno { return 0 }\n"), 1)})
	if bytes.Contains(wasm, []byte("\x0bsched_yield")) {
		t.Fatal("the module still imports sched_yield")
	}
	return wasm
}

// withBallast builds the guest at pkg with a file that makes its
// initialization hold 48 MiB: a module a host whose memory limit is
// smaller cannot run.
func withBallast(t *testing.T, pkg string) []byte {
	t.Helper()
	const ballast = "package main\n\nvar ballast []byte\n\nfunc init() {\n\tballast = make([]byte, 48<<20)\n\tballast[len(ballast)-1] = 1\n}\n"
	return overlaid(t, pkg, map[string][]byte{filepath.Join(guestbuild.Root(), pkg, "ballast_test_overlay.go"): []byte(ballast)})
}

// fetchLog is a store that notes what each fetch of work took; while
// holdActivities is set, its activity fetches take nothing, so that what
// orchestrations schedule waits.
type fetchLog struct {
	store.Store
	holdActivities atomic.Bool
	mu             sync.Mutex
	// emptyInstances and emptyActivities count the fetches that took
	// nothing; changed is closed and replaced at every fetch.
	emptyInstances, emptyActivities int
	changed                         chan struct{}
}

func (s *fetchLog) note(instances bool, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case n > 0:
	case instances:
		s.emptyInstances++
	default:
		s.emptyActivities++
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *fetchLog) LockNextInstances(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.WorkItem, error) {
	items, err := s.Store.LockNextInstances(ctx, now, lease, max, skip)
	s.note(true, len(items))
	return items, err
}

func (s *fetchLog) LockNextActivities(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.ActivityWork, error) {
	if s.holdActivities.Load() {
		s.note(false, 0)
		return nil, nil
	}
	ws, err := s.Store.LockNextActivities(ctx, now, lease, max, skip)
	s.note(false, len(ws))
	return ws, err
}

// empty returns how many fetches of instances, and of activity tasks,
// have taken nothing so far.
func (s *fetchLog) empty() (instances, activities int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emptyInstances, s.emptyActivities
}

// waitEmpty waits, for a minute at most, until fetches of both kinds
// have taken nothing more times than instances and activities say.
func (s *fetchLog) waitEmpty(t *testing.T, instances, activities int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		s.mu.Lock()
		done, changed := s.emptyInstances > instances && s.emptyActivities > activities, s.changed
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no fetch came back empty within a minute")
		}
	}
}

// serve opens path and runs a host with opts on it, its fetches noted,
// its logs in logs (when not nil); its stop closes the store too, for the
// next host to open.
func serve(t *testing.T, path string, opts host.Options, logs *bytes.Buffer) (*testHost, *fetchLog) {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	fl := &fetchLog{Store: st, changed: make(chan struct{})}
	h := runHost(t, st, fl, opts)
	stopHost := h.stop
	h.stop = func() {
		stopHost()
		st.Close()
	}
	return h, fl
}

// TestHostThatCannotRunAModuleLeavesItsWorkWaiting: instances of a module
// whose initialization holds 48 MiB run until the host stops: one waits
// for its Approval event, three for their first activity. A host whose
// memory limit is 32 MiB, which cannot run the module, is started on the
// database: it
// says so at start, in its modules listing and in each instance's
// details, refuses to deploy the module, accepts an event and a start for
// it, and takes none of its work: nothing fails. A host with the default limit then
// finishes every instance, and no history records a failure.
func TestHostThatCannotRunAModuleLeavesItsWorkWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wasm := withBallast(t, "examples/wasm/approval")
	path := filepath.Join(t.TempDir(), "durabox.db")
	request := json.RawMessage(`{"item": "chair", "timeout": "1h"}`)
	approve := json.RawMessage(`{"approved": true, "by": "ann"}`)
	start := func(h *testHost, id string) {
		t.Helper()
		if _, err := h.Start(ctx, "Approval", request, id); err != nil {
			t.Fatal(err)
		}
	}
	waiting := []string{"a1", "a2", "a3"}
	all := []string{"b1", "a1", "a2", "a3", "a4"}

	first, firstLog := serve(t, path, host.Options{}, nil)
	info, err := first.Deploy(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	start(first, "b1")
	waitForCustomStatus(t, first, "b1")
	firstLog.holdActivities.Store(true)
	for _, id := range waiting {
		start(first, id)
		waitUntil(t, id+" has scheduled its activity", func(ctx context.Context) (bool, error) {
			events, err := first.History(ctx, id)
			return len(events) == 2, err // started, Notify scheduled
		})
	}
	first.stop()

	var logs bytes.Buffer
	second, secondLog := serve(t, path, host.Options{MemoryLimit: 32 << 20}, &logs)
	waitUntil(t, "the host is ready", func(ctx context.Context) (bool, error) { return second.Ready(ctx) == nil, nil })
	secondLog.waitEmpty(t, 0, 0)
	for _, id := range waiting {
		if inst, err := second.Instance(ctx, id); err != nil || inst.Status.IsTerminal() {
			t.Fatalf("%s on the host that cannot run its module: %s, failure %+v, %v; want it waiting", id, inst.Status, inst.Failure, err)
		}
	}
	instances, activities := secondLog.empty()
	if err := second.Raise(ctx, "b1", "Approval", approve, false); err != nil {
		t.Fatal(err)
	}
	start(second, "a4")
	// The raise and the start woke the dispatcher: once a fetch after
	// them has come back empty, the host has passed over their work.
	secondLog.waitEmpty(t, instances, activities)

	if line := logLine(logs.String(), "cannot run"); !strings.Contains(line, info.Hash[:12]) || !strings.Contains(line, "32 MiB") {
		t.Errorf("the host's log says %q; want a line at start naming module %s and why it cannot run it", line, info.Hash[:12])
	}
	if _, err := second.Deploy(ctx, wasm); err == nil || !strings.Contains(err.Error(), "32 MiB") {
		t.Errorf("deploy on wasmtime: %v; want it refused, saying why", err)
	}
	handler, err := server.New(second.Host, server.Options{Metrics: second.Host.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	c := client.New(srv.URL, nil)
	mods, err := c.Modules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 1 || !strings.Contains(mods[0].Refused, "32 MiB") {
		t.Errorf("modules listed: %+v; want the module, with why this host cannot run it", mods)
	}
	for _, id := range all {
		d, err := c.Details(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status.IsTerminal() || d.Failure != nil {
			t.Errorf("%s is %s, failure %+v; want it waiting", id, d.Status, d.Failure)
		}
		if !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "waits for a host that can run its module") }) {
			t.Errorf("%s's warnings: %q; want one saying it waits for a host that can run its module", id, d.Warnings)
		}
	}
	second.stop()

	third, _ := serve(t, path, host.Options{}, nil)
	for _, id := range all[1:] {
		waitForCustomStatus(t, third, id)
		if err := third.Raise(ctx, id, "Approval", approve, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range all {
		inst := third.wait(t, id)
		if inst.Status != engine.StatusCompleted || string(inst.Result) != `"chair approved by ann"` {
			t.Errorf("%s: %s, result %s, failure %+v; want it Completed, approved", id, inst.Status, inst.Result, inst.Failure)
		}
		events, err := third.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if ev.Failure != nil {
				t.Errorf("%s's history records a failure: %s %+v", id, ev.Kind, ev.Failure)
			}
		}
	}
}

// logLine returns the first line of logs that holds s, or "".
func logLine(logs, s string) string {
	for line := range strings.Lines(logs) {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}
