package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
)

// The guest SDK's waits on state (ctx.AwaitWithTimeout), SelectKeep and
// cancellation scopes (ctx.WithCancel), through the wasm module
// host/testdata/guests/await on a real host. Events the test raises, a
// clock it moves and an activity it answers when it chooses decide every
// outcome. The kit tests the same features
// (guest-sdk/durabox/durtest/await_test.go), and internal/kitparity checks
// that the kit and a host record them alike.

// gate is an HTTP server on the loopback whose answers wait until the test
// opens it: an activity that fetches from it ends when the test says.
type gate struct {
	srv  *httptest.Server
	open chan struct{}
	once sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{open: make(chan struct{})}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-g.open
		fmt.Fprint(w, "late news")
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// host returns the gate's host:port, for the allow-list.
func (g *gate) host() string {
	u, _ := url.Parse(g.srv.URL)
	return u.Host
}

// release lets every answer go, once.
func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// awaitHost runs a host that may reach g, with the await guest deployed.
// Its clock is the real one moved ahead by what ahead holds. g is opened
// when the test ends, before the host stops, so that no attempt is left
// waiting on it.
func awaitHost(t *testing.T, g *gate, ahead *atomic.Int64) *testHost {
	opts := host.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }}
	if g != nil {
		opts.HTTPAllowList = []string{g.host()}
	}
	h := startHost(t, opts)
	if g != nil {
		t.Cleanup(g.release)
	}
	h.deploy(t, "host/testdata/guests/await")
	return h
}

// raiseNamed raises the event name with no data.
func (h *testHost) raiseNamed(t *testing.T, id, name string) {
	t.Helper()
	if err := h.Raise(context.Background(), id, name, json.RawMessage(`null`), false); err != nil {
		t.Fatal(err)
	}
}

// replays checks that the instance's history replays on its module.
func (h *testHost) replays(t *testing.T, id string) {
	t.Helper()
	rep, err := h.Replay(context.Background(), id, api.ReplayRequest{})
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		t.Fatalf("the history of %s does not replay: %v", id, err)
	}
}

func expectShape(t *testing.T, events []engine.Event, want ...string) {
	t.Helper()
	if got := shape(events); !slices.Equal(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}
}

// TestAwaitWithTimeout: the condition (set by a branch when the event Go
// comes) holds before the timer fires, and the timer is cancelled; or the
// clock passes the timeout first, and the timer fires.
func TestAwaitWithTimeout(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	h := awaitHost(t, nil, &ahead)
	waiting := func(events []engine.Event) bool {
		return count(events, engine.TimerCreated) == 1 && count(events, engine.ExternalSubscribed) == 1
	}
	t.Run("the condition holds first", func(t *testing.T) {
		id := h.start(t, "AwaitGo", `"1h"`)
		h.until(t, id, "the timer and the wait", waiting)
		h.raiseNamed(t, id, "Go")
		events := h.finish(t, id, `"ready"`)
		expectShape(t, events, "OrchestrationStarted(AwaitGo)", "TimerCreated", "ExternalSubscribed(Go)", "ExternalEvent(Go)", "TimerCancelled", "OrchestrationCompleted")
		h.replays(t, id)
	})
	t.Run("the timeout first", func(t *testing.T) {
		id := h.start(t, "AwaitGo", `"1h"`)
		h.until(t, id, "the timer and the wait", waiting)
		ahead.Add(int64(2 * time.Hour))
		events := h.finish(t, id, `"timed out"`)
		expectShape(t, events, "OrchestrationStarted(AwaitGo)", "TimerCreated", "ExternalSubscribed(Go)", "TimerFired", "OrchestrationCompleted")
		h.replays(t, id)
	})
}

// TestSelectKeepUsesTheLoser: the event wins the SelectKeep while the
// activity is held; nothing is cancelled, and the activity's result, let
// go after, is received and used.
func TestSelectKeepUsesTheLoser(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	h := awaitHost(t, g, new(atomic.Int64))
	id := h.start(t, "KeepLoser", `"`+g.srv.URL+`"`)
	h.until(t, id, "the activity and the wait", func(events []engine.Event) bool {
		return count(events, engine.ActivityScheduled) == 1 && count(events, engine.ExternalSubscribed) == 1
	})
	h.raiseNamed(t, id, "Go")
	h.until(t, id, "the event", has(1, engine.ExternalEvent))
	g.release()
	events := h.finish(t, id, `"the event won; the fetch then said late news"`)
	expectShape(t, events, "OrchestrationStarted(KeepLoser)", "ActivityScheduled(Fetch)", "ExternalSubscribed(Go)", "ExternalEvent(Go)", "ActivityCompleted", "OrchestrationCompleted")
	h.replays(t, id)
}

// TestCancellationScopeCancelsTogether: a timer, an activity (held, so
// still running) and a wait started in one scope are cancelled by one
// call, each recorded as a lost Select's is, in the order they started; a
// timer started in the scope afterwards is never scheduled.
func TestCancellationScopeCancelsTogether(t *testing.T) {
	t.Parallel()
	g := newGate(t)
	h := awaitHost(t, g, new(atomic.Int64))
	id := h.start(t, "Scope", `"`+g.srv.URL+`"`)
	h.until(t, id, "the three operations and the wait for Cancel", has(2, engine.ExternalSubscribed))
	h.raiseNamed(t, id, "Cancel")
	events := h.finish(t, id, `"true true true true"`)
	expectShape(t, events, "OrchestrationStarted(Scope)", "TimerCreated", "ActivityScheduled(Fetch)", "ExternalSubscribed(Never)", "ExternalSubscribed(Cancel)",
		"ExternalEvent(Cancel)", "TimerCancelled", "ActivityCancelRequested", "ExternalSubscribedCancelled", "OrchestrationCompleted")
	for i, target := range []int64{2, 3, 4} {
		if got := events[6+i].ScheduleID; got != target {
			t.Errorf("cancel %d names event %d, want %d (cancelled in the order started)", i, got, target)
		}
	}
	h.replays(t, id)
}

// TestMutexExampleServesManyWorkers: ten Worker instances of
// examples/wasm/mutex, started at once, ask one Lock instance for the lock
// by events they raise at each other (ctx.Raise), and are granted it one
// at a time, in the order their requests arrived: no worker's work
// overlaps another's, and Lock continues as new after serving eight.
func TestMutexExampleServesManyWorkers(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/mutex")
	ctx := context.Background()
	if _, err := h.Start(ctx, "Lock", json.RawMessage(`0`), "lock"); err != nil {
		t.Fatal(err)
	}
	const workers = 10
	for i := range workers {
		if _, err := h.Start(ctx, "Worker", json.RawMessage(fmt.Sprintf(`{"lock": "lock", "work": "job %d"}`, i)), fmt.Sprint("w", i)); err != nil {
			t.Fatal(err)
		}
	}
	type held struct {
		worker    string
		from, end time.Time
	}
	var holds []held
	for i := range workers {
		id := fmt.Sprint("w", i)
		hold := held{worker: id}
		for _, e := range h.finish(t, id, fmt.Sprintf(`"did job %d"`, i)) {
			switch {
			case e.Kind == engine.ActivityScheduled && e.Name == "Work":
				hold.from = e.Time
			case e.Kind == engine.ActivityCompleted && !hold.from.IsZero() && hold.end.IsZero():
				hold.end = e.Time
			}
		}
		holds = append(holds, hold)
	}
	// One at a time: each worker's work began after the one before it
	// ended.
	slices.SortStableFunc(holds, func(a, b held) int { return a.from.Compare(b.from) })
	for i := 1; i < len(holds); i++ {
		if holds[i].from.Before(holds[i-1].end) {
			t.Fatalf("%s began its work at %s, while %s held the lock until %s", holds[i].worker, holds[i].from, holds[i-1].worker, holds[i-1].end)
		}
	}
	// In order: Lock granted the lock in the order the requests arrived
	// (an execution's unanswered requests are carried into the next).
	inst, err := h.Instance(ctx, "lock")
	if err != nil {
		t.Fatal(err)
	}
	if inst.ExecutionID != 2 {
		t.Errorf("Lock is in execution %d, want 2 (it continues as new after eight)", inst.ExecutionID)
	}
	var arrived, granted, began []string
	for execution := int64(1); execution <= inst.ExecutionID; execution++ {
		events, err := h.ExecutionHistory(ctx, "lock", execution)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			var asker string
			switch {
			case e.Kind == engine.ExternalEventPersistent && e.Name == "acquire" && json.Unmarshal(e.Result, &asker) == nil && !slices.Contains(arrived, asker):
				arrived = append(arrived, asker)
			case e.Kind == engine.ExternalEventSent && e.Name == "granted":
				granted = append(granted, e.InstanceID)
			}
		}
	}
	for _, hold := range holds {
		began = append(began, hold.worker)
	}
	if !slices.Equal(granted, arrived) || !slices.Equal(began, arrived) || len(arrived) != workers {
		t.Fatalf("requests arrived from %v; Lock granted %v; the workers began in the order %v", arrived, granted, began)
	}
	for i := range workers {
		h.replays(t, fmt.Sprint("w", i))
	}
	h.replays(t, "lock")
}

// TestAwaitReplaysAndAChangedOrderDoesNot: an instance that awaited A then
// B replays on its module; on a build that awaits B first, the replay
// diverges where that code no longer starts what history has.
func TestAwaitReplaysAndAChangedOrderDoesNot(t *testing.T) {
	t.Parallel()
	h := awaitHost(t, nil, new(atomic.Int64))
	id := h.start(t, "Ordered", `null`)
	h.until(t, id, "both waits", has(2, engine.ExternalSubscribed))
	h.raiseNamed(t, id, "A")
	h.until(t, id, "the timer after A", has(1, engine.TimerCreated))
	h.raiseNamed(t, id, "B")
	h.finish(t, id, `"AB"`)
	h.replays(t, id)
	changed := h.deploy(t, "host/testdata/guests/await", "main.order=BA")
	rep, err := h.Replay(context.Background(), id, api.ReplayRequest{Module: changed.Hash})
	if err != nil {
		t.Fatal(err)
	}
	// Event 5 is the timer that followed A: the changed code waits for B
	// there instead.
	const before, after = "nondeterminism at event 5: history has TimerCreated(", "), the orchestration emitted nothing"
	if d := rep.Divergence; d == nil || d.Code != engine.MissingCommand || !strings.HasPrefix(d.Message, before) || !strings.HasSuffix(d.Message, after) {
		t.Fatalf("replay on the changed module: %+v, divergence %+v; want %s…%s", rep, rep.Divergence, before, after)
	}
}
