package guestkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// kitStart is the time on the kit's clock when a host begins, and the
// logical time of a raw script's first activation.
var kitStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// liveEqualsReplayed names the case that runs the host cases again on a
// host that replays every turn.
const liveEqualsReplayed = "live-equals-replayed"

// A hostCase runs on a host.
type hostCase struct {
	name string
	run  func(d *driver) error
}

// driver drives one host, one step at a time, under the kit's clock.
type driver struct {
	ctx context.Context
	h   *host.Host
	mu  sync.Mutex
	now time.Time
}

func (d *driver) clock() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.now
}

// advance moves the clock on by dur.
func (d *driver) advance(dur time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.now = d.now.Add(dur)
}

// openHost opens a host on a fresh SQLite file in dir, on the kit's clock,
// with the module deployed.
func (k *kit) openHost(name string, opts host.Options) (*driver, func(), error) {
	st, err := sqlite.Open(filepath.Join(k.dir, k.runtime+"-"+name+".db"), sqlite.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("guestkit: %w", err)
	}
	d := &driver{ctx: k.ctx, now: kitStart}
	opts.Runtime, opts.Clock, opts.CacheDir = k.runtime, d.clock, k.compiled()
	h, err := host.New(st, opts)
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("guestkit: %w", err)
	}
	d.h = h
	closeAll := func() {
		h.Close()
		st.Close()
	}
	if _, err := h.Deploy(k.ctx, k.wasm); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("guestkit: deploy: %w", err)
	}
	return d, closeAll, nil
}

// runHostCases runs the selected host cases on a host that keeps its
// instances live, then on one that replays every turn on a fresh instance,
// and compares every history the two recorded.
func (k *kit) runHostCases() error {
	var cases []hostCase
	for _, c := range hostCases {
		if k.selected(c.name) {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		if k.selected(liveEqualsReplayed) {
			k.add(liveEqualsReplayed, skipped("it compares the histories of the host cases, and none was selected"))
		}
		return nil
	}
	live, closeLive, err := k.openHost("live", host.Options{})
	if err != nil {
		return err
	}
	defer closeLive()
	for _, c := range cases {
		if c.name == queryCase && !k.queryable {
			k.add(c.name, skipped("the module does not register the optional orchestration Queryable"))
			continue
		}
		k.add(c.name, c.run(live))
	}
	if !k.selected(liveEqualsReplayed) {
		return nil
	}
	cold, closeCold, err := k.openHost("replayed", host.Options{NoLiveCache: true})
	if err != nil {
		return err
	}
	defer closeCold()
	for _, c := range cases {
		if c.name != queryCase || k.queryable {
			c.run(cold) // its outcome is the histories, compared below
		}
	}
	k.add(liveEqualsReplayed, sameHistories(live, cold))
	return nil
}

// sameHistories compares every execution of every instance of two hosts,
// event by event, byte for byte.
func sameHistories(live, cold *driver) error {
	a, err := allHistories(live)
	if err != nil {
		return err
	}
	b, err := allHistories(cold)
	if err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(a)) {
		other, ok := b[key]
		if !ok {
			return fmt.Errorf("%s: a host that replays every turn on a fresh instance has no such execution; one that kept the instances live has", key)
		}
		for i := range max(len(a[key]), len(other)) {
			l, r := "(none)", "(none)"
			if i < len(a[key]) {
				l = a[key][i]
			}
			if i < len(other) {
				r = other[i]
			}
			if l != r {
				return fmt.Errorf("%s, event %d: a host that replays every turn on a fresh instance recorded another event than one that kept the instance live:\nlive:     %s\nreplayed: %s\na guest must do the same work whatever the replaying flag says, and decide nothing by its heap (ABI.md, \"The protocol\")", key, i+1, l, r)
			}
		}
	}
	if len(a) != len(b) {
		return fmt.Errorf("a host that replays every turn on a fresh instance has %d executions, one that kept the instances live %d", len(b), len(a))
	}
	return nil
}

// allHistories returns every execution's history, each event as JSON, by
// instance and execution.
func allHistories(d *driver) (map[string][]string, error) {
	out := map[string][]string{}
	page, err := d.h.List(d.ctx, store.InstanceQuery{Limit: 1000})
	if err != nil {
		return nil, err
	}
	for _, inst := range page.Instances {
		for x := int64(1); x <= inst.ExecutionID; x++ {
			events, err := d.h.ExecutionHistory(d.ctx, inst.ID, x)
			if err != nil {
				return nil, err
			}
			key := fmt.Sprintf("instance %s, execution %d", inst.ID, x)
			for _, e := range events {
				b, err := json.Marshal(e)
				if err != nil {
					return nil, err
				}
				out[key] = append(out[key], string(b))
			}
		}
	}
	return out, nil
}

// start starts an instance of orchestration name with input.
func (d *driver) start(id, name, input string) error {
	if _, err := d.h.Start(d.ctx, name, json.RawMessage(input), id); err != nil {
		return fmt.Errorf("start %s(%s) as instance %s: %v", name, input, id, err)
	}
	return nil
}

// settle runs every turn and every activity due, again and again, until
// nothing is left to run; reversed runs each round's activities in the
// reverse of the order they were scheduled.
func (d *driver) settle(reversed bool) error {
	for {
		turns, err := d.h.RunTurns(d.ctx, d.clock())
		if err != nil {
			return err
		}
		acts, err := d.h.RunActivities(d.ctx, d.clock(), reversed)
		if err != nil {
			return err
		}
		if turns+acts == 0 {
			return nil
		}
	}
}

// end is how an instance must have ended.
type end struct {
	status engine.Status
	// result is the JSON it completed with.
	result string
	// failure is what its failure's message must contain.
	failure string
}

func (e end) String() string {
	switch {
	case e.status == engine.StatusCompleted:
		return fmt.Sprintf("Completed with %s", canonical([]byte(e.result)))
	case e.failure != "":
		return fmt.Sprintf("%s with a message that contains %q", e.status, e.failure)
	}
	return string(e.status)
}

// expect checks how instance id ended and the shape of the history of
// its execution (0: its current one), and replays the current one on the
// module that recorded it.
func (d *driver) expect(spec, id string, want end, execution int64, history ...string) error {
	inst, err := d.h.Instance(d.ctx, id)
	if err != nil {
		return fmt.Errorf("instance %s (%s): %v", id, spec, err)
	}
	got := string(inst.Status)
	switch {
	case inst.Status == engine.StatusCompleted:
		got += " with " + canonical(inst.Result)
	case inst.Failure != nil:
		got += fmt.Sprintf(": %s", inst.Failure.Message)
	}
	ok := inst.Status == want.status
	if ok && want.status == engine.StatusCompleted {
		ok = canonical(inst.Result) == canonical([]byte(want.result))
	}
	if ok && want.failure != "" {
		ok = inst.Failure != nil && strings.Contains(inst.Failure.Message, want.failure)
	}
	if execution == 0 {
		execution = inst.ExecutionID
	}
	events, err := d.h.ExecutionHistory(d.ctx, id, execution)
	if err != nil {
		return fmt.Errorf("instance %s: %v", id, err)
	}
	if !ok {
		return fmt.Errorf("instance %s of %s: expected it %s; it is %s\nits history:\n  %s\nsee docs/conformance.md, %q", id, spec, want, got, strings.Join(shapes(events), "\n  "), spec)
	}
	if history != nil && !slices.Equal(shapes(events), history) {
		return fmt.Errorf("instance %s of %s: expected the history\n  %s\nit recorded\n  %s\nsee docs/conformance.md, %q", id, spec, strings.Join(history, "\n  "), strings.Join(shapes(events), "\n  "), spec)
	}
	if execution == inst.ExecutionID {
		return d.replays(id)
	}
	return nil
}

// replays replays instance id's current execution on its module.
func (d *driver) replays(id string) error {
	rep, err := d.h.Replay(d.ctx, id, api.ReplayRequest{})
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		return fmt.Errorf("durabox replay of instance %s fails: %v; the same activations must give the same commands", id, err)
	}
	return nil
}

// each runs steps in turn, up to the first that fails.
func each(steps ...func() error) error {
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// queryCase names the case of the optional Queryable.
const queryCase = "query"

var hostCases = []hostCase{
	{"sequence", func(d *driver) error {
		return each(
			func() error { return d.start("sequence", "Sequence", `["a","b","c"]`) },
			func() error { return d.start("sequence-empty", "Sequence", `[]`) },
			func() error { return d.settle(false) },
			func() error {
				return d.expect("Sequence", "sequence", end{status: engine.StatusCompleted, result: `["a","b","c"]`}, 0,
					`OrchestrationStarted("Sequence", ["a","b","c"])`,
					`ActivityScheduled("Echo", "a")`, `ActivityCompleted(event 2, "a")`,
					`ActivityScheduled("Echo", "b")`, `ActivityCompleted(event 4, "b")`,
					`ActivityScheduled("Echo", "c")`, `ActivityCompleted(event 6, "c")`,
					`OrchestrationCompleted(["a","b","c"])`)
			},
			func() error {
				return d.expect("Sequence", "sequence-empty", end{status: engine.StatusCompleted, result: `[]`}, 0,
					`OrchestrationStarted("Sequence", [])`, `OrchestrationCompleted([])`)
			})
	}},
	{"fanout", func(d *driver) error {
		return each(
			func() error { return d.start("fanout", "FanOut", `3`) },
			func() error { return d.settle(true) },
			func() error {
				return d.expect("FanOut", "fanout", end{status: engine.StatusCompleted, result: `[0,1,2]`}, 0,
					`OrchestrationStarted("FanOut", 3)`,
					`ActivityScheduled("Echo", 0)`, `ActivityScheduled("Echo", 1)`, `ActivityScheduled("Echo", 2)`,
					`ActivityCompleted(event 4, 2)`, `ActivityCompleted(event 3, 1)`, `ActivityCompleted(event 2, 0)`,
					`OrchestrationCompleted([0,1,2])`)
			})
	}},
	{"fails", func(d *driver) error {
		return each(
			func() error { return d.start("fails", "Fails", `"x"`) },
			func() error { return d.settle(false) },
			func() error {
				return d.expect("Fails", "fails", end{status: engine.StatusFailed, failure: "boom: x"}, 0,
					`OrchestrationStarted("Fails", "x")`, `ActivityScheduled("Boom", "x")`,
					`ActivityFailed(event 2, "…")`, `OrchestrationFailed("…")`)
			},
			func() error { return d.failureContains("Boom", "fails", 3, "boom: x") })
	}},
	{"timer", func(d *driver) error {
		return each(
			func() error { return d.start("timer", "Timer", `30`) },
			func() error { return d.settle(false) },
			func() error { d.advance(30 * time.Second); return d.settle(false) },
			func() error {
				return d.expect("Timer", "timer", end{status: engine.StatusCompleted, result: `30`}, 0,
					`OrchestrationStarted("Timer", 30)`, `TimerCreated(+30s)`, `TimerFired(event 2)`, `OrchestrationCompleted(30)`)
			})
	}},
	{"race", func(d *driver) error {
		return each(
			func() error { return d.start("race", "Race", `null`) },
			func() error { return d.settle(false) },
			func() error {
				return d.expect("Race", "race", end{status: engine.StatusCompleted, result: `"fast"`}, 0,
					`OrchestrationStarted("Race", null)`, `ActivityScheduled("Echo", "fast")`, `TimerCreated(+1h0m0s)`,
					`ActivityCompleted(event 2, "fast")`, `TimerCancelled(event 3)`, `OrchestrationCompleted("fast")`)
			})
	}},
	{"events", func(d *driver) error {
		return each(
			func() error { return d.start("events", "Events", `null`) },
			func() error { return d.settle(false) },
			func() error { return d.raise("events", "second", `2`, true) },
			func() error { return d.raise("events", "first", ``, false) },
			func() error {
				return d.expect("Events", "events", end{status: engine.StatusCompleted, result: `[null,2]`}, 0,
					`OrchestrationStarted("Events", null)`, `ExternalSubscribed("first")`, `ExternalSubscribedPersistent("second")`,
					`ExternalEventPersistent("second", 2)`, `ExternalEvent("first", null, for event 2)`, `OrchestrationCompleted([null,2])`)
			})
	}},
	{"cancel", func(d *driver) error {
		return each(
			func() error { return d.start("cancellable", "Cancellable", `null`) },
			func() error { _, err := d.h.RunTurns(d.ctx, d.clock()); return err },
			func() error { return d.cancel("cancellable", "stop") },
			func() error { return d.settle(false) },
			func() error {
				return d.expect("Cancellable", "cancellable", end{status: engine.StatusCanceled, failure: "stop"}, 0,
					`OrchestrationStarted("Cancellable", null)`, `ActivityScheduled("Echo", "never")`, `TimerCreated(+1h0m0s)`,
					`ExternalSubscribed("never")`, `ExternalSubscribedPersistent("never-persistent")`,
					`SubOrchestrationScheduled("Waiter", "cancellable~1:6", null)`, `OrchestrationCancelRequested("stop")`,
					`ActivityCancelRequested(event 2)`, `TimerCancelled(event 3)`, `ExternalSubscribedCancelled(event 4)`,
					`ExternalSubscribedCancelled(event 5)`, `SubOrchestrationCancelRequested(event 6)`, `OrchestrationCanceled("…")`)
			},
			func() error {
				return d.expect("Waiter", "cancellable~1:6", end{status: engine.StatusCanceled}, 0)
			})
	}},
	{"children", func(d *driver) error {
		return each(
			func() error { return d.start("parent", "Parent", `"x"`) },
			func() error { return d.settle(false) },
			func() error {
				return d.expect("Parent", "parent", end{status: engine.StatusCompleted, result: `["x"]`}, 0,
					`OrchestrationStarted("Parent", "x")`, `SubOrchestrationScheduled("Sequence", "parent~1:2", ["x"])`,
					`OrchestrationChained("Waiter", "parent-waiter", null)`, `SubOrchestrationCompleted(event 2, ["x"])`,
					`OrchestrationCompleted(["x"])`)
			},
			func() error {
				return d.expect("Sequence", "parent~1:2", end{status: engine.StatusCompleted, result: `["x"]`}, 0)
			},
			func() error { return d.raise("parent-waiter", "go", `"bye"`, false) },
			func() error {
				return d.expect("Waiter", "parent-waiter", end{status: engine.StatusCompleted, result: `"bye"`}, 0,
					`OrchestrationStarted("Waiter", null)`, `ExternalSubscribed("go")`, `ExternalEvent("go", "bye", for event 2)`,
					`OrchestrationCompleted("bye")`)
			})
	}},
	{"continue-as-new", func(d *driver) error {
		return each(
			func() error { return d.start("countdown", "Countdown", `2`) },
			func() error { return d.settle(false) },
			func() error {
				return d.expect("Countdown", "countdown", end{status: engine.StatusCompleted, result: `"liftoff"`}, 1,
					`OrchestrationStarted("Countdown", 2)`, `ActivityScheduled("Echo", 2)`, `ActivityCompleted(event 2, 2)`,
					`OrchestrationContinuedAsNew(1)`)
			},
			func() error {
				return d.expect("Countdown", "countdown", end{status: engine.StatusCompleted, result: `"liftoff"`}, 3,
					`OrchestrationStarted("Countdown", 0)`, `ActivityScheduled("Echo", 0)`, `ActivityCompleted(event 2, 0)`,
					`OrchestrationCompleted("liftoff")`)
			})
	}},
	{"status-and-patch", func(d *driver) error {
		return each(
			func() error { return d.start("status", "Status", `null`) },
			func() error { return d.settle(false) },
			func() error {
				return d.expect("Status", "status", end{status: engine.StatusCompleted, result: `"patched"`}, 0,
					`OrchestrationStarted("Status", null)`, `CustomStatusSet("working")`, `PatchRecorded("kit-change")`,
					`ActivityScheduled("Echo", "patched")`, `ActivityCompleted(event 4, "patched")`, `CustomStatusSet("done")`,
					`OrchestrationCompleted("patched")`)
			})
	}},
	{"raise", func(d *driver) error {
		return each(
			func() error { return d.start("raise-target", "Waiter", `null`) },
			func() error { return d.settle(false) },
			func() error { return d.start("raiser", "Raiser", `"raise-target"`) },
			func() error { return d.start("raiser-nobody", "Raiser", `"nobody-here"`) },
			func() error { return d.settle(false) },
			func() error {
				return d.expect("Raiser", "raiser", end{status: engine.StatusCompleted, result: `true`}, 0,
					`OrchestrationStarted("Raiser", "raise-target")`, `ExternalEventSent("raise-target", "go", "raised")`,
					`ExternalEventDelivered(event 2)`, `OrchestrationCompleted(true)`)
			},
			func() error {
				return d.expect("Waiter", "raise-target", end{status: engine.StatusCompleted, result: `"raised"`}, 0)
			},
			func() error {
				return d.expect("Raiser", "raiser-nobody", end{status: engine.StatusCompleted, result: `false`}, 0,
					`OrchestrationStarted("Raiser", "nobody-here")`, `ExternalEventSent("nobody-here", "go", "raised")`,
					`ExternalEventNotDelivered(event 2, "…")`, `OrchestrationCompleted(false)`)
			})
	}},
	{queryCase, func(d *driver) error {
		return each(
			func() error { return d.start("queryable", queryableName, `null`) },
			func() error { return d.settle(false) },
			func() error { return d.query("queryable", `"initial"`) },
			d.unknownQuery,
			func() error { return d.raise("queryable", "set", `"changed"`, false) },
			func() error { return d.query("queryable", `"changed"`) },
			func() error { return d.raise("queryable", "stop", ``, false) },
			func() error {
				return d.expect(queryableName, "queryable", end{status: engine.StatusCompleted, result: `"changed"`}, 0,
					`OrchestrationStarted("Queryable", null)`, `ExternalSubscribed("set")`, `ExternalEvent("set", "changed", for event 2)`,
					`ExternalSubscribed("stop")`, `ExternalEvent("stop", null, for event 4)`, `OrchestrationCompleted("changed")`)
			},
			func() error { return d.query("queryable", `"changed"`) })
	}},
}

// raise raises an event (data empty: none) and settles.
func (d *driver) raise(id, name, data string, persistent bool) error {
	var raw json.RawMessage
	if data != "" {
		raw = json.RawMessage(data)
	}
	if err := d.h.Raise(d.ctx, id, name, raw, persistent); err != nil {
		return fmt.Errorf("raise %s for instance %s: %v%s", name, id, err, d.state(id))
	}
	return d.settle(false)
}

// cancel cancels instance id.
func (d *driver) cancel(id, reason string) error {
	if err := d.h.Cancel(d.ctx, id, reason); err != nil {
		return fmt.Errorf("cancel instance %s: %v%s", id, err, d.state(id))
	}
	return nil
}

// state says where instance id is, for a message: its status, and its
// failure if it has one.
func (d *driver) state(id string) string {
	inst, err := d.h.Instance(d.ctx, id)
	if err != nil || inst.Failure == nil {
		return ""
	}
	return fmt.Sprintf("\nit is %s: %s", inst.Status, inst.Failure.Message)
}

// failureContains checks that event n of instance id's history failed
// with a message that contains want.
func (d *driver) failureContains(spec, id string, n int, want string) error {
	events, err := d.h.History(d.ctx, id)
	if err != nil {
		return err
	}
	if f := events[n-1].Failure; f == nil || !strings.Contains(f.Message, want) {
		return fmt.Errorf("instance %s: event %d, %s, should say %q; see docs/conformance.md, %q", id, n, events[n-1].String(), want, spec)
	}
	return nil
}

// query asks instance id the query state and checks the answer.
func (d *driver) query(id, want string) error {
	got, err := d.h.Query(d.ctx, id, "state", nil)
	if err != nil {
		return fmt.Errorf("the query state of instance %s: %v; expected %s (docs/conformance.md, %q)", id, err, want, queryableName)
	}
	if canonical(got) != canonical([]byte(want)) {
		return fmt.Errorf("the query state of instance %s answered %s; expected %s (docs/conformance.md, %q)", id, canonical(got), want, queryableName)
	}
	return nil
}

// unknownQuery asks the queryable instance a query it does not handle.
func (d *driver) unknownQuery() error {
	_, err := d.h.Query(d.ctx, "queryable", "nope", nil)
	if !errors.Is(err, api.ErrUnknownQuery) || !strings.Contains(err.Error(), "state") {
		return fmt.Errorf("the query nope, which Queryable does not handle: %v; expected a failure, with the handlers [state] (ABI.md, \"Queries\")", err)
	}
	return nil
}

// refusedModule reports whether err is a host's refusal of a module.
func refusedModule(err error) bool { return errors.Is(err, api.ErrBadModule) }
