package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/testhost"
)

func TestMain(m *testing.M) {
	code := m.Run()
	guestbuild.Cleanup()
	os.Exit(code)
}

// A scenario starts an orchestration under a fixed id (so that its
// children's ids are the same in both runs) and acts on it from outside:
// each step waits until the instance's current history satisfies when.
type scenario struct {
	name, orchestration string
	input               any
	steps               []step
}

type step struct {
	when func(history []engine.Event) bool
	do   func(a actor)
}

// actor is what a step can do: what durabox raise and durabox cancel do.
type actor interface {
	raise(name, data string, persistent bool)
	cancel(reason string)
}

// waiting holds once the history has a wait for the event name.
func waiting(name string) func([]engine.Event) bool {
	return func(h []engine.Event) bool {
		for _, e := range h {
			if e.Kind == engine.ExternalSubscribed && e.Name == name {
				return true
			}
		}
		return false
	}
}

// inRound holds when the history is of Rounds' execution for round and
// cond holds.
func inRound(round int, cond func([]engine.Event) bool) func([]engine.Event) bool {
	return func(h []engine.Event) bool { return len(h) > 0 && string(h[0].Input) == fmt.Sprint(round) && cond(h) }
}

var scenarios = []scenario{
	{name: "timers", orchestration: "Timers"},
	{name: "events", orchestration: "Events", steps: []step{
		{waiting("A"), func(a actor) { a.raise("B", "early", false); a.raise("P", "kept", true); a.raise("A", "a", false) }},
		{waiting("B"), func(a actor) { a.raise("B", "b", false) }},
	}},
	{name: "selects", orchestration: "Selects", steps: []step{
		{waiting("Go"), func(a actor) { a.raise("Never", "late", false); a.raise("Go", "go", false) }},
	}},
	{name: "cancellation", orchestration: "Guard", steps: []step{
		{waiting("Never"), func(a actor) { a.cancel("enough") }},
	}},
	{name: "children", orchestration: "Family", input: []string{"ada", ""}},
	{name: "continue-as-new", orchestration: "Rounds", input: 1, steps: []step{
		{inRound(1, waiting("Next")), func(a actor) { a.raise("Note", "one", true); a.raise("Next", "", false) }},
		{inRound(2, waiting("Next")), func(a actor) { a.raise("Note", "two", true); a.raise("Next", "", false) }},
	}},
	{name: "retries", orchestration: "Retries"},
	{name: "signals", orchestration: "Signals"},
	{name: "conditions", orchestration: "Conditions", steps: []step{
		{waiting("Ready"), func(a actor) { a.raise("Ready", "", false) }},
	}},
}

// TestTheKitRecordsWhatAHostRecords runs each scenario natively with
// durtest and as wasm on a real host, and compares the histories of the
// instance and of every child it started, execution by execution (see
// same).
func TestTheKitRecordsWhatAHostRecords(t *testing.T) {
	t.Parallel()
	h := startHost(t)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			native := runNative(t, sc)
			wasm := runOnHost(t, h, sc)
			if len(native) != len(wasm) {
				t.Fatalf("natively %d instances (%v), on the host %d (%v)", len(native), ids(native), len(wasm), ids(wasm))
			}
			for id, executions := range native {
				if len(wasm[id]) != len(executions) {
					t.Fatalf("instance %s: natively %d executions, on the host %d", id, len(executions), len(wasm[id]))
				}
				for n := range executions {
					if diff := same(executions[n], wasm[id][n]); diff != "" {
						t.Errorf("instance %s, execution %d: %s\nnatively:\n%s\non the host:\n%s", id, n+1, diff, describe(executions[n]), describe(wasm[id][n]))
					}
				}
			}
		})
	}
}

// histories maps each instance of a scenario (the one started, and every
// child, grandchild, …) to the histories of its executions.
type histories map[string][][]engine.Event

func ids(hs histories) []string {
	var out []string
	for id := range hs {
		out = append(out, id)
	}
	return out
}

// collect gathers the histories of root and of every instance its
// histories start, with get, which returns an instance's executions and
// whether it has ended (false, with no executions, if it does not exist).
func collect(root string, get func(id string) ([][]engine.Event, bool)) (histories, bool) {
	out := histories{}
	ended := true
	pending := []string{root}
	for len(pending) > 0 {
		id := pending[0]
		pending = pending[1:]
		executions, done := get(id)
		if executions == nil {
			continue
		}
		out[id] = executions
		ended = ended && done
		for _, h := range executions {
			for _, e := range h {
				if e.Kind == engine.SubOrchestrationScheduled || e.Kind == engine.OrchestrationChained {
					pending = append(pending, e.InstanceID)
				}
			}
		}
	}
	return out, ended
}

// runNative runs a scenario with the kit, moving its fake clock from one
// due moment to the next while no step applies.
func runNative(t *testing.T, sc scenario) histories {
	env := durtest.New(t, durtest.Options{})
	inst := env.Start(sc.orchestration, sc.input, sc.name)
	get := func(id string) ([][]engine.Event, bool) {
		i := env.Instance(id)
		if i == nil {
			return nil, false
		}
		var executions [][]engine.Event
		for n := 1; n <= i.Executions(); n++ {
			executions = append(executions, i.ExecutionHistory(n))
		}
		return executions, i.Status().IsTerminal()
	}
	steps := sc.steps
	for {
		if len(steps) > 0 && steps[0].when(inst.History()) {
			steps[0].do(kitActor{inst})
			steps = steps[1:]
			continue
		}
		if all, ended := collect(sc.name, get); len(steps) == 0 && ended {
			return all
		}
		if !env.AdvanceToNext() {
			t.Fatalf("natively, nothing more is due and the scenario has not ended; history:\n%s", describe(inst.History()))
		}
	}
}

type kitActor struct{ inst *durtest.Instance }

func (a kitActor) raise(name, data string, persistent bool) {
	if persistent {
		a.inst.RaisePersistent(name, data)
	} else {
		a.inst.Raise(name, data)
	}
}

func (a kitActor) cancel(reason string) { a.inst.Cancel(reason) }

// startHost runs a host on a fresh SQLite file with this module deployed.
func startHost(t *testing.T) *host.Host {
	t.Helper()
	wasm, err := guestbuild.Wasm("internal/kitparity")
	if err != nil {
		t.Fatal(err)
	}
	return testhost.Start(t, host.Options{}, wasm)
}

// runOnHost runs a scenario on the host, in real time, looking at the
// instance every few milliseconds.
func runOnHost(t *testing.T, h *host.Host, sc scenario) histories {
	ctx := context.Background()
	input, err := json.Marshal(sc.input)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(ctx, sc.orchestration, input, sc.name); err != nil {
		t.Fatal(err)
	}
	get := func(id string) ([][]engine.Event, bool) {
		inst, err := h.Instance(ctx, id)
		if errors.Is(err, api.ErrNotFound) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		var executions [][]engine.Event
		for n := int64(1); n <= inst.ExecutionID; n++ {
			events, err := h.ExecutionHistory(ctx, id, n)
			if err != nil {
				t.Fatal(err)
			}
			executions = append(executions, events)
		}
		return executions, inst.Status.IsTerminal()
	}
	a := hostActor{t: t, h: h, id: sc.name}
	steps := sc.steps
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		history, err := h.History(ctx, sc.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) > 0 && steps[0].when(history) {
			steps[0].do(a)
			steps = steps[1:]
			continue
		}
		if all, ended := collect(sc.name, get); len(steps) == 0 && ended {
			return all
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("on the host, the scenario did not end in 60s; history:\n%s", describe(history))
		}
	}
}

type hostActor struct {
	t  *testing.T
	h  *host.Host
	id string
}

func (a hostActor) raise(name, data string, persistent bool) {
	raw, _ := json.Marshal(data)
	if err := a.h.Raise(context.Background(), a.id, name, raw, persistent); err != nil {
		a.t.Fatal(err)
	}
}

func (a hostActor) cancel(reason string) {
	if err := a.h.Cancel(context.Background(), a.id, reason); err != nil {
		a.t.Fatal(err)
	}
}

// same says how two histories of one execution differ, or returns "".
//
// Same means: the same events in the same order, each with the same id,
// kind, schedule id, name, instance id, input, result (byte for byte),
// failure message, cancellation reason and custom status; and each timer
// due the same delay after the event that created it. Times themselves are
// not compared: the kit's clock is fake and a host's real, so a timer fires
// exactly when due in one and a little later in the other, and events that
// one records at the same moment the other records milliseconds apart.
// Each history must only be in time order, with no timer firing before it
// was due. (A failure's details hold stack traces, whose paths differ, and
// are not compared.)
func same(a, b []engine.Event) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d events against %d", len(a), len(b))
	}
	for _, h := range [][]engine.Event{a, b} {
		if err := inTimeOrder(h); err != nil {
			return err.Error()
		}
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Kind != y.Kind || x.ScheduleID != y.ScheduleID || x.Name != y.Name || x.InstanceID != y.InstanceID ||
			!bytes.Equal(x.Input, y.Input) || !bytes.Equal(x.Result, y.Result) || message(x.Failure) != message(y.Failure) ||
			x.Reason != y.Reason || x.CustomStatus != y.CustomStatus {
			return fmt.Sprintf("event %d is %s against %s", x.ID, x.String(), y.String())
		}
		if x.Kind == engine.TimerCreated && x.FireAt.Sub(x.Time) != y.FireAt.Sub(y.Time) {
			return fmt.Sprintf("event %d: a timer of %s against one of %s", x.ID, x.FireAt.Sub(x.Time), y.FireAt.Sub(y.Time))
		}
	}
	return ""
}

// inTimeOrder checks that no event is older than the one before it, and
// no timer fired before it was due.
func inTimeOrder(h []engine.Event) error {
	for i, e := range h {
		if i > 0 && e.Time.Before(h[i-1].Time) {
			return fmt.Errorf("event %d is older than event %d", e.ID, h[i-1].ID)
		}
		if e.Kind == engine.TimerFired && e.Time.Before(*e.FireAt) {
			return fmt.Errorf("event %d fired at %s, before the timer was due at %s", e.ID, e.Time, e.FireAt)
		}
	}
	return nil
}

func message(f *engine.Failure) string {
	if f == nil {
		return ""
	}
	return f.Message
}

func describe(h []engine.Event) string {
	var b bytes.Buffer
	for _, e := range h {
		fmt.Fprintf(&b, "  %s\n", e.String())
	}
	return b.String()
}
