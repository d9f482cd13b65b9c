package guestkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// hostStart is the time on the kit's clock when a host begins.
var hostStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

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
	d := &driver{ctx: k.ctx, now: hostStart}
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

// sameHistories compares every execution of every instance of two hosts
// byte for byte.
func sameHistories(live, cold *driver) error {
	a, err := allHistories(live)
	if err != nil {
		return err
	}
	b, err := allHistories(cold)
	if err != nil {
		return err
	}
	for key, events := range a {
		if other, ok := b[key]; !ok || other != events {
			return fmt.Errorf("%s: a host that replays every turn on a fresh instance recorded another history than one that kept the instance live:\nlive:\n%s\nreplayed:\n%s\na guest must do the same work whatever the replaying flag says, and decide nothing by its heap (ABI.md, \"The protocol\")", key, events, other)
		}
	}
	if len(a) != len(b) {
		return fmt.Errorf("a host that replays every turn on a fresh instance has %d executions, one that kept the instances live %d", len(b), len(a))
	}
	return nil
}

// allHistories returns every execution's history, as JSON, by instance
// and execution.
func allHistories(d *driver) (map[string]string, error) {
	out := map[string]string{}
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
			b, _ := json.MarshalIndent(events, "", " ")
			out[fmt.Sprintf("instance %s, execution %d", inst.ID, x)] = string(b)
		}
	}
	return out, nil
}

// start starts an instance of orchestration name with input.
func (d *driver) start(id, name, input string) error {
	_, err := d.h.Start(d.ctx, name, json.RawMessage(input), id)
	return err
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

// expect checks how instance id ended and the shape of its history
// (execution's, or its current one when 0), then replays it on the module
// that recorded it.
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
	events, err := d.h.ExecutionHistory(d.ctx, id, cmp(execution, inst.ExecutionID))
	if err != nil {
		return fmt.Errorf("instance %s: %v", id, err)
	}
	if !ok {
		return fmt.Errorf("instance %s of %s: expected it %s; it is %s\nits history:\n  %s\nsee docs/conformance.md, %q", id, spec, want, got, strings.Join(shapes(events), "\n  "), spec)
	}
	if history != nil && !slices.Equal(shapes(events), history) {
		return fmt.Errorf("instance %s of %s: expected the history\n  %s\nit recorded\n  %s\nsee docs/conformance.md, %q", id, spec, strings.Join(history, "\n  "), strings.Join(shapes(events), "\n  "), spec)
	}
	if execution == 0 {
		return d.replays(id)
	}
	return nil
}

// cmp is a if it is set, else b.
func cmp(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
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
}

// refusedModule reports whether err is a host's refusal of a module.
func refusedModule(err error) bool { return errors.Is(err, api.ErrBadModule) }
