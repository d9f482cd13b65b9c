package host_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// TestTerminate: a terminated instance ends at once, Terminated, with the
// termination in its history; its child still running ends with it, the
// instance it started detached lives on, and its own timer is dropped.
func TestTerminate(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/walkthroughs")
	ctx := context.Background()
	if _, err := h.Start(ctx, "Family", nil, "family"); err != nil {
		t.Fatal(err)
	}
	h.until(t, "family~1:2", "the child's timer", has(1, engine.TimerCreated))
	h.until(t, "family~1:3", "the detached instance's timer", has(1, engine.TimerCreated))
	if q, err := h.Queue(ctx); err != nil || q.Timers != 3 {
		t.Fatalf("queue before: %+v, %v; want 3 timers (the family's, its child's, the detached one's)", q, err)
	}
	if err := h.Terminate(ctx, "family", "stuck in a loop"); err != nil {
		t.Fatal(err)
	}
	parent := h.wait(t, "family")
	if parent.Status != engine.StatusTerminated || parent.Failure == nil || parent.Failure.Message != "terminated: stuck in a loop" {
		t.Fatalf("family: %s %+v; want Terminated, terminated: stuck in a loop", parent.Status, parent.Failure)
	}
	history := h.history(t, "family")
	want := []string{"OrchestrationStarted(Family)", "SubOrchestrationScheduled(Sleeper)", "OrchestrationChained(Sleeper)", "TimerCreated", "OrchestrationTerminated"}
	if got := shape(history); !reflect.DeepEqual(got, want) || history[4].Reason != "stuck in a loop" {
		t.Fatalf("family's history %v (%+v)\nwant %v", got, history[len(history)-1], want)
	}
	child := h.wait(t, "family~1:2")
	if child.Status != engine.StatusTerminated || child.Failure.Message != "terminated: its parent family was terminated" {
		t.Fatalf("child: %s %+v", child.Status, child.Failure)
	}
	if detached, err := h.Instance(ctx, "family~1:3"); err != nil || detached.Status != engine.StatusRunning {
		t.Fatalf("the detached instance: %+v, %v; want it Running still", detached, err)
	}
	if q, err := h.Queue(ctx); err != nil || q.Timers != 1 {
		t.Fatalf("queue after: %+v, %v; want the detached instance's timer alone", q, err)
	}
}

// TestFinishedInstancesRefuseMessages: raising, cancelling or terminating
// an instance that has finished is refused with its status, not accepted
// and dropped.
func TestFinishedInstancesRefuseMessages(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/walkthroughs")
	ctx := context.Background()
	id := h.run(t, "Sleeper", `"0s"`).ID
	for name, send := range map[string]func() error{
		"raise":                    func() error { return h.Raise(ctx, id, "X", nil, false) },
		"raise a persistent event": func() error { return h.Raise(ctx, id, "X", nil, true) },
		"cancel":                   func() error { return h.Cancel(ctx, id, "") },
		"terminate":                func() error { return h.Terminate(ctx, id, "") },
	} {
		err := send()
		if want := `host: instance finished: "` + id + `" is Completed; nothing more can happen to it`; !errors.Is(err, api.ErrFinished) || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", name, err, want)
		}
	}
	if q, err := h.Queue(ctx); err != nil || q.Ready != 0 {
		t.Fatalf("queue %+v, %v; want nothing waiting", q, err)
	}
}

// TestPersistentEventLimit: an execution takes engine.MaxPersistentEvents
// persistent events, or the host's Options.MaxPersistentEvents; the one
// past them, counting those taken and those waiting, is refused to its
// caller.
func TestPersistentEventLimit(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 3} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			t.Parallel()
			want := cmp.Or(limit, engine.MaxPersistentEvents)
			h := startHost(t, host.Options{MaxPersistentEvents: limit})
			h.deploy(t, "host/testdata/guests/events")
			id := h.start(t, "WaitPersistent", fmt.Sprintf(`{"times": %d}`, want+1))
			h.until(t, id, "the first wait", has(1, engine.ExternalSubscribedPersistent))
			// A positional event does not count.
			h.raise(t, id, `"positional"`, false)
			for i := range want {
				h.raise(t, id, `"`+string(rune('a'+i))+`"`, true)
			}
			err := h.Raise(context.Background(), id, "X", json.RawMessage(`"past"`), true)
			if !errors.Is(err, api.ErrTooManyEvents) || !strings.Contains(err.Error(), fmt.Sprintf("already has %d persistent events taken or waiting", want)) {
				t.Fatalf("persistent event %d: %v; want ErrTooManyEvents", want+1, err)
			}
			// They are taken; the orchestration waits for one more it cannot
			// have.
			h.until(t, id, "every event taken", has(want, engine.ExternalEventPersistent))
		})
	}
}

// TestTimerPastMaxTime: a timer past what the store can keep (the longest
// Go duration) waits until engine.MaxTime instead of firing at once.
func TestTimerPastMaxTime(t *testing.T) {
	t.Parallel()
	h := eventsHost(t)
	id := h.start(t, "Wait", `{"pause": "2562047h47m16.854775807s", "times": 1}`)
	events := h.until(t, id, "the timer", has(1, engine.TimerCreated))
	if at := events[1].FireAt; at == nil || !at.Equal(engine.MaxTime) {
		t.Fatalf("the timer is due at %v; want engine.MaxTime", at)
	}
	q, err := h.Queue(context.Background())
	if err != nil || q.Timers != 1 || !q.NextTimer.Equal(engine.MaxTime) || q.Ready != 0 {
		t.Fatalf("queue %+v, %v; want one timer, due at engine.MaxTime, and nothing ready", q, err)
	}
	if inst, err := h.Instance(context.Background(), id); err != nil || inst.Status != engine.StatusRunning {
		t.Fatalf("instance %+v, %v; want it Running", inst, err)
	}
}

// TestRetention: a sweep purges what finished more than Retention ago,
// deletes the history of executions that continued as new more than
// Retention ago, and the audit log's records older than Retention, by the
// host's clock (here a clock the test moves).
func TestRetention(t *testing.T) {
	t.Parallel()
	var ahead atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	h := startHost(t, host.Options{Clock: clock, Retention: time.Hour, SweepInterval: 24 * time.Hour})
	h.deploy(t, "host/testdata/guests/events")
	h.deploy(t, "host/testdata/guests/walkthroughs")
	ctx := context.Background()
	done := h.run(t, "Sleeper", `"0s"`).ID
	eternal := h.start(t, "ContinueThenWait", `1`)
	h.until(t, eternal, "the second execution", func([]engine.Event) bool {
		inst, err := h.Instance(ctx, eternal)
		return err == nil && inst.ExecutionID == 2
	})
	sweep := func(want host.Swept) {
		t.Helper()
		if got, err := h.Sweep(ctx); err != nil || got != want {
			t.Fatalf("Sweep with the clock %s ahead = %+v, %v; want %+v", time.Duration(ahead.Load()), got, err, want)
		}
	}
	if err := h.AppendAudit(ctx, store.AuditRecord{Token: "alice", Role: "admin", Action: "cancel", Target: done, Status: 202, Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	sweep(host.Swept{})
	ahead.Store(int64(59 * time.Minute))
	sweep(host.Swept{})
	if err := h.AppendAudit(ctx, store.AuditRecord{Token: "bob", Role: "admin", Action: "start", Target: "later", Status: 201, Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	ahead.Store(int64(61 * time.Minute))
	sweep(host.Swept{Instances: 1, Executions: 1, AuditRecords: 1})
	if page, err := h.Audit(ctx, store.AuditQuery{}); err != nil || len(page.Records) != 1 || page.Records[0].Token != "bob" {
		t.Errorf("the audit log after the sweep: %+v, %v; want bob's record alone", page, err)
	}
	if _, err := h.Instance(ctx, done); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("the completed instance after the sweep: %v; want it purged", err)
	}
	_, err := h.ExecutionHistory(ctx, eternal, 1)
	if want := `host: execution not found: the history of execution 1 of "` + eternal + `" is no longer kept (the host's retention deleted it)`; err == nil || err.Error() != want {
		t.Errorf("the first execution's history after the sweep: %v\nwant %s", err, want)
	}
	if inst, err := h.Instance(ctx, eternal); err != nil || inst.Status != engine.StatusPending && inst.Status != engine.StatusRunning {
		t.Errorf("the instance that continued as new: %+v, %v; want it there, waiting", inst, err)
	}
	sweep(host.Swept{})
}

// TestRemoveModule: a module instances run on is not removed, and the
// refusal names them; one none runs on is, and its orchestrations go back
// to the module before it.
func TestRemoveModule(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	ctx := context.Background()
	v1 := h.deploy(t, "host/testdata/guests/crashy")
	v2 := h.deploy(t, "host/testdata/guests/crashy", "main.version=v2")
	id := h.run(t, "Version", `"0s"`).ID
	err := h.RemoveModule(ctx, v2.Hash)
	if want := `host: module in use: 1 instances run on it: "` + id + `"; purge them first (they keep their histories, which it made)`; !errors.Is(err, api.ErrModuleInUse) || err.Error() != want {
		t.Fatalf("remove the module in use: %v\nwant %s", err, want)
	}
	if err := h.RemoveModule(ctx, v1.Hash); err != nil {
		t.Fatalf("remove the module no instance runs on: %v", err)
	}
	if err := h.Purge(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := h.RemoveModule(ctx, v2.Hash); err != nil {
		t.Fatalf("remove the module once its instance is purged: %v", err)
	}
	if _, err := h.Start(ctx, "Version", nil, ""); !errors.Is(err, api.ErrUnknownOrchestration) {
		t.Fatalf("start once every module is removed: %v; want ErrUnknownOrchestration", err)
	}
	if err := h.RemoveModule(ctx, v2.Hash); !errors.Is(err, api.ErrModuleNotFound) {
		t.Fatalf("remove a module removed: %v; want ErrModuleNotFound", err)
	}
	mods, err := h.Modules(ctx)
	if err != nil || len(mods) != 0 {
		t.Fatalf("modules %+v, %v; want none", mods, err)
	}
}

// TestDeployTime: a deployment says when it happened, by the host's clock.
func TestDeployTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	h := startHost(t, host.Options{Clock: func() time.Time { return at }})
	info := h.deploy(t, "examples/wasm/hello")
	mods, err := h.Modules(context.Background())
	if !info.DeployedAt.Equal(at) || err != nil || len(mods) != 1 || !mods[0].DeployedAt.Equal(at) {
		t.Fatalf("deployed at %s, listed %+v (%v); want %s", info.DeployedAt, mods, err, at)
	}
}

// TestInputNotUTF8: JSON input and event data must be UTF-8.
func TestInputNotUTF8(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/events")
	ctx := context.Background()
	if _, err := h.Start(ctx, "Wait", json.RawMessage("\"\xff\""), ""); !errors.Is(err, api.ErrBadInput) || err.Error() != "host: bad input: the input is not I-JSON (RFC 7493): invalid UTF-8 at byte 1" {
		t.Fatalf("start: %v", err)
	}
	id := h.start(t, "Wait", `{"times": 1}`)
	if err := h.Raise(ctx, id, "X", json.RawMessage("\"\xc3\x28\""), false); !errors.Is(err, api.ErrBadInput) || err.Error() != "host: bad input: the event's data is not I-JSON (RFC 7493): invalid UTF-8 at byte 1" {
		t.Fatalf("raise: %v", err)
	}
	if err := h.Raise(ctx, id, "\xff", nil, false); !errors.Is(err, api.ErrBadInput) {
		t.Fatalf("raise with a name not UTF-8: %v", err)
	}
	page, err := h.List(ctx, store.InstanceQuery{})
	if err != nil || len(page.Instances) != 1 {
		t.Fatalf("instances %+v, %v; want the one started", page, err)
	}
}
