package host

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// stepper drives a bare host by hand: a test says which activities
// complete, and in what order, before each turn.
type stepper struct {
	// name says which host it drives, in failures.
	name string
	h    *Host
	// leased holds the activity tasks leased and not completed yet, by
	// instance and input ("Parallel/A").
	leased map[string]*store.ActivityWork
	// shown counts, per instance, the events has has checked.
	shown map[string]int
}

func newStepper(name string, h *Host) *stepper {
	return &stepper{name: name, h: h, leased: map[string]*store.ActivityWork{}, shown: map[string]int{}}
}

// turns runs every turn the host has work for.
func (s *stepper) turns(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for {
		item, err := lockNext(ctx, s.h.st, conformanceNow, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if item == nil {
			return
		}
		s.h.turn(ctx, item)
	}
}

// lease leases every activity task there is.
func (s *stepper) lease(t *testing.T) {
	t.Helper()
	for {
		w, err := leaseNext(context.Background(), s.h.st, conformanceNow, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if w == nil {
			return
		}
		var input string
		json.Unmarshal(w.Task.Input, &input)
		s.leased[w.InstanceID+"/"+input] = w
	}
}

// complete completes the activities instance id called with inputs, in
// that order, then runs the turns: results that arrive together are taken
// by one turn.
func (s *stepper) complete(t *testing.T, id string, inputs ...string) {
	t.Helper()
	s.lease(t)
	for _, input := range inputs {
		w, ok := s.leased[id+"/"+input]
		if !ok {
			t.Fatalf("%s: %s has no activity called with %q; the calls waiting are %q", s.name, id, input, slices.Sorted(maps.Keys(s.leased)))
		}
		delete(s.leased, id+"/"+input)
		s.h.runTask(context.Background(), w, time.Time{}, false)
	}
	s.turns(t)
}

// raise raises the event name for instance id, then runs the turns.
func (s *stepper) raise(t *testing.T, id, name string) {
	t.Helper()
	if err := s.h.Raise(context.Background(), id, name, nil, false); err != nil {
		t.Fatal(err)
	}
	s.turns(t)
}

// finish completes the activities of instance id until it has none, then
// checks that it completed and that its history replays.
func (s *stepper) finish(t *testing.T, id string) {
	t.Helper()
	for {
		s.lease(t)
		var inputs []string
		for _, key := range slices.Sorted(maps.Keys(s.leased)) {
			if instance, input, _ := strings.Cut(key, "/"); instance == id {
				inputs = append(inputs, input)
			}
		}
		if len(inputs) == 0 {
			break
		}
		s.complete(t, id, inputs...)
	}
	ctx := context.Background()
	if inst, err := s.h.Instance(ctx, id); err != nil || inst.Status != engine.StatusCompleted {
		t.Fatalf("%s: %s: %s %+v (%v)", s.name, id, inst.Status, inst.Failure, err)
	}
	if rep := replayOn(t, s.h, id, ""); !rep.OK() {
		t.Fatalf("%s: %v", s.name, rep.Err())
	}
}

// has checks the events instance id recorded since the last check, each
// as describe names it.
func (s *stepper) has(t *testing.T, id string, want ...string) {
	t.Helper()
	events, err := s.h.History(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	got := describeAll(events[s.shown[id]:])
	s.shown[id] = len(events)
	if !slices.Equal(got, want) {
		t.Fatalf("%s, %s recorded:\n%q\nwant:\n%q", s.name, id, got, want)
	}
}

// TestSchedulerThroughCtxGo holds the guest SDK's scheduler to the rules of
// the scheduler reference through ctx.Go in wasm, on one host that keeps
// its instances live and on one that replays every turn on a fresh
// instance: scheduling is a function of the activations alone, so both
// record the same histories.
func TestSchedulerThroughCtxGo(t *testing.T) {
	t.Parallel()
	var hosts []*stepper
	for _, mode := range []struct {
		name string
		opts Options
	}{{"the host that keeps instances live", Options{}}, {"the host that replays every turn", Options{NoLiveCache: true}}} {
		s := newStepper(mode.name, conformanceHost(t, mode.opts))
		startEach(t, s.h, `null`, "Parallel", "Together", "Deferred", "NonPausing", "Nested")
		if _, err := s.h.Start(context.Background(), "Parallel", nil, "Parallel2"); err != nil {
			t.Fatal(err)
		}
		s.turns(t)
		hosts = append(hosts, s)
	}
	// each runs a rule's steps on both hosts.
	each := func(steps func(t *testing.T, s *stepper)) func(*testing.T) {
		return func(t *testing.T) {
			for _, s := range hosts {
				steps(t, s)
			}
		}
	}
	t.Run("branches start in the next round in order", each(func(t *testing.T, s *stepper) {
		for _, id := range []string{"Parallel", "Parallel2"} {
			s.has(t, id, "OrchestrationStarted", "call root", "call A", "call B")
		}
	}))
	t.Run("a result wakes only its waiter", each(func(t *testing.T, s *stepper) {
		s.complete(t, "Parallel", "A")
		s.has(t, "Parallel", "done A", "call C after A")
		s.complete(t, "Parallel", "B")
		s.has(t, "Parallel", "done B", "call D after B")
		s.finish(t, "Parallel")
	}))
	t.Run("results of one turn wake in history order", each(func(t *testing.T, s *stepper) {
		s.complete(t, "Parallel2", "B", "A")
		s.has(t, "Parallel2", "done B", "call D after B", "done A", "call C after A")
		s.finish(t, "Parallel2")
	}))
	t.Run("woken together run by id", each(func(t *testing.T, s *stepper) {
		s.has(t, "Together", "OrchestrationStarted", "ExternalSubscribed go", "call first waits")
		s.complete(t, "Together", "first waits")
		s.has(t, "Together", "done first waits")
		s.raise(t, "Together", "go")
		s.has(t, "Together", "ExternalEvent go", "call first", "call second")
		s.finish(t, "Together")
	}))
	t.Run("woken during a round run in the next", each(func(t *testing.T, s *stepper) {
		s.has(t, "Deferred", "OrchestrationStarted", "ExternalSubscribed go", "ExternalSubscribed never 1", "ExternalSubscribed never 2")
		s.raise(t, "Deferred", "go")
		s.has(t, "Deferred", "ExternalEvent go", "ExternalSubscribedCancelled", "call 0", "ExternalSubscribedCancelled", "call 3", "call 1", "call 2")
		s.finish(t, "Deferred")
	}))
	t.Run("calls that do not pause keep the turn", each(func(t *testing.T, s *stepper) {
		s.has(t, "NonPausing", "OrchestrationStarted", "call 0 before", "CustomStatusSet", "TimerCreated", "ExternalSubscribed never",
			"OrchestrationChained", "call 0 after", "call 1")
		s.finish(t, "NonPausing")
	}))
	t.Run("nested units run in lexicographic order", each(func(t *testing.T, s *stepper) {
		s.has(t, "Nested", "OrchestrationStarted", "ExternalSubscribed go")
		s.raise(t, "Nested", "go")
		s.has(t, "Nested", "ExternalEvent go", "call root", "call 0", "call 0 0", "call 0 1", "call 1", "call 1 0")
		s.finish(t, "Nested")
	}))
}
