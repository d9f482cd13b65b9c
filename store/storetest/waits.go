package storetest

import (
	"reflect"
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// waitOn commits one turn of instance id at now, with events, waiting on
// waits afterwards: their kinds, and all of them kept.
func (f *fixture) waitOn(id string, now time.Time, waits []engine.Wait, events ...engine.Event) {
	f.t.Helper()
	c := turn(f.lockID(now, id), events...)
	c.Now, c.Waits = now, waits
	for _, w := range waits {
		if !slices.Contains(c.WaitingOn, w.Kind) {
			c.WaitingOn = append(c.WaitingOn, w.Kind)
		}
	}
	f.commit(c)
}

// testWaits: a turn's commit records what the instance waits on, which
// Waits returns and WaitingOn selects; ProgressedBefore selects the
// instances not finished that no commit changed since; a refused update
// leaves the waits as they were, and a continue-as-new clears them.
func testWaits(f *fixture) {
	_, err := f.s.Waits(f.ctx, "absent")
	f.wantErr(err, store.ErrNotFound, "Waits of an instance that does not exist")

	due := t0.Add(time.Hour)
	timer := []engine.Wait{{Kind: engine.WaitTimer, ScheduleID: 2, Since: t0.Add(2 * time.Second), Due: &due},
		{Kind: engine.WaitEvent, ScheduleID: 3, Name: "Approve", Since: t0.Add(3 * time.Second)}}
	f.create("w1")
	f.waitOn("w1", t0.Add(time.Minute), timer, started("w1", input("w1")), timerCreated(due), engine.Event{Kind: engine.ExternalSubscribed, Name: "Approve"})
	f.create("w2")
	f.waitOn("w2", t0.Add(10*time.Minute), []engine.Wait{{Kind: engine.WaitActivity, ScheduleID: 2, Name: "Charge"}}, started("w2", input("w2")), scheduled("Charge"))
	f.create("w3") // Pending: created at t0, never run
	f.create("w4")
	f.run("w4", t0, started("w4", input("w4")), completed(`"done"`))

	waits, err := f.s.Waits(f.ctx, "w1")
	f.must(err, "Waits of w1")
	for i := range waits {
		// A store keeps times to the nanosecond, in UTC or not.
		waits[i].Since = waits[i].Since.UTC()
		if waits[i].Due != nil {
			d := waits[i].Due.UTC()
			waits[i].Due = &d
		}
	}
	if !reflect.DeepEqual(waits, timer) {
		f.t.Fatalf("Waits of w1 = %+v; want %+v", waits, timer)
	}
	if waits, err := f.s.Waits(f.ctx, "w3"); err != nil || len(waits) != 0 {
		f.t.Fatalf("Waits of an instance not yet run = %+v, %v; want none", waits, err)
	}
	tests := []struct {
		name   string
		filter store.InstanceFilter
		want   []string
	}{
		{"a timer", store.InstanceFilter{WaitingOn: []engine.WaitKind{engine.WaitTimer}}, []string{"w1"}},
		{"an event", store.InstanceFilter{WaitingOn: []engine.WaitKind{engine.WaitEvent}}, []string{"w1"}},
		{"an activity", store.InstanceFilter{WaitingOn: []engine.WaitKind{engine.WaitActivity}}, []string{"w2"}},
		{"an activity or a timer", store.InstanceFilter{WaitingOn: []engine.WaitKind{engine.WaitActivity, engine.WaitTimer}}, []string{"w2", "w1"}},
		{"a child", store.InstanceFilter{WaitingOn: []engine.WaitKind{engine.WaitChild}}, nil},
		{"no progress since t0+5m", store.InstanceFilter{ProgressedBefore: t0.Add(5 * time.Minute)}, []string{"w3", "w1"}},
		{"no progress since t0+1h", store.InstanceFilter{ProgressedBefore: t0.Add(time.Hour)}, []string{"w3", "w2", "w1"}},
		{"no progress since t0", store.InstanceFilter{ProgressedBefore: t0}, nil},
		{"stalled on a timer", store.InstanceFilter{ProgressedBefore: t0.Add(time.Hour), WaitingOn: []engine.WaitKind{engine.WaitTimer}}, []string{"w1"}},
	}
	for _, tt := range tests {
		if got := f.list(tt.filter); !slices.Equal(got, tt.want) {
			f.t.Fatalf("%s: ListInstances = %v; want %v", tt.name, got, tt.want)
		}
	}
	counts, err := f.s.CountInstances(f.ctx, store.InstanceFilter{ProgressedBefore: t0.Add(time.Hour)})
	f.must(err, "CountInstances")
	n := 0
	for _, c := range counts {
		n += c.Count
	}
	if n != 3 {
		f.t.Fatalf("CountInstances of the instances with no progress since t0+1h = %+v; want 3", counts)
	}

	// A refused update changes nothing w1 waits on.
	f.must(f.s.Enqueue(f.ctx, "w1", engine.UpdateRequest("u1", "Add", nil), t0.Add(2*time.Hour), nil), "Enqueue")
	item := f.lockID(t0.Add(2*time.Hour), "w1")
	f.commit(store.TurnCommit{InstanceID: "w1", ExecutionID: 1, LockToken: item.LockToken, Now: t0.Add(2 * time.Hour), Status: engine.StatusRunning,
		Consumed: []int64{item.Messages[0].ID}, Refused: &store.RefusedUpdate{UpdateID: "u1", Failure: &engine.Failure{Message: "no"}}})
	if got := f.list(store.InstanceFilter{WaitingOn: []engine.WaitKind{engine.WaitTimer}}); !slices.Equal(got, []string{"w1"}) {
		f.t.Fatalf("after a refused update, the instances waiting on a timer = %v; want w1 still", got)
	}
	if waits, err := f.s.Waits(f.ctx, "w1"); err != nil || len(waits) != 2 {
		f.t.Fatalf("Waits of w1 after a refused update = %+v, %v; want its two waits still", waits, err)
	}

	// A continue-as-new leaves the next execution waiting on nothing until
	// its first turn.
	f.must(f.s.Enqueue(f.ctx, "w2", engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 2}, t0.Add(3*time.Hour), nil), "Enqueue")
	item = f.lockID(t0.Add(3*time.Hour), "w2")
	c := turn(item, activityCompleted(2, `1`), engine.Event{Kind: engine.OrchestrationContinuedAsNew, Input: input("w2")})
	c.Now, c.Status = t0.Add(3*time.Hour), engine.StatusContinuedAsNew
	c.ContinueAsNew = &engine.ContinueAsNew{Input: input("w2"), Started: started("w2", input("w2"))}
	f.commit(c)
	if waits, err := f.s.Waits(f.ctx, "w2"); err != nil || len(waits) != 0 {
		f.t.Fatalf("Waits of w2 once it continued as new = %+v, %v; want none", waits, err)
	}
	if got := f.list(store.InstanceFilter{WaitingOn: []engine.WaitKind{engine.WaitActivity}}); len(got) != 0 {
		f.t.Fatalf("once w2 continued as new, the instances waiting on an activity = %v; want none", got)
	}
}
