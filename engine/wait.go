package engine

import (
	"cmp"
	"slices"
	"time"
)

// WaitKind names a kind of thing an execution waits on.
type WaitKind string

// The kinds of wait.
const (
	// WaitActivity is an activity call not yet answered.
	WaitActivity WaitKind = "activity"
	// WaitTimer is a timer not yet fired.
	WaitTimer WaitKind = "timer"
	// WaitEvent is a wait for a raised event (positional or persistent).
	WaitEvent WaitKind = "event"
	// WaitUpdate is an update whose handler has not answered, or, when
	// the execution waits on nothing else, the update that could wake it.
	WaitUpdate WaitKind = "update"
	// WaitChild is a child instance that has not ended.
	WaitChild WaitKind = "child"
)

// WaitKinds returns every kind of wait.
func WaitKinds() []WaitKind {
	return []WaitKind{WaitActivity, WaitTimer, WaitEvent, WaitUpdate, WaitChild}
}

// Wait is one thing an execution waits on.
type Wait struct {
	Kind WaitKind `json:"kind"`
	// ScheduleID is the schedule event that began the wait; 0 for an
	// update.
	ScheduleID int64 `json:"scheduleId,omitempty"`
	// Name is the activity's, the event's, the child's orchestration's or
	// the update's name.
	Name string `json:"name,omitempty"`
	// ID is the child's instance id, or the update's id.
	ID string `json:"id,omitempty"`
	// Persistent marks a persistent event wait.
	Persistent bool `json:"persistent,omitempty"`
	// Since is the time of the event that began the wait (zero for the
	// update that could wake an execution waiting on nothing else); Due,
	// for a timer, when it comes due.
	Since time.Time  `json:"since,omitzero"`
	Due   *time.Time `json:"due,omitempty"`
}

// waitKinds maps the schedule events that open a wait to its kind. An
// event raised at an instance (ExternalEventSent) is no wait: its caller
// delivers it with the turn's commit.
var waitKinds = map[EventKind]WaitKind{
	ActivityScheduled: WaitActivity, TimerCreated: WaitTimer, ExternalSubscribed: WaitEvent,
	ExternalSubscribedPersistent: WaitEvent, SubOrchestrationScheduled: WaitChild,
}

// MaxWaits is how many of an execution's waits beside its activity calls
// a turn's result lists (TurnResult.Waits); the activity calls are as
// many as its activity tasks, which describe them.
const MaxWaits = 100

// Waiting returns the kinds of what the execution waits on, as far as it
// has applied history, in WaitKinds' order, and the first MaxWaits of its
// waits beside its activity calls: its timers, event waits and children
// in the order it scheduled them, then the updates whose handlers have
// not answered, by id. An execution whose guest handles updates
// (abi.ActivationResult.HandlesUpdates) and that waits on nothing else
// waits on an update, of no name. Its cost does not grow with the waits
// it does not list.
func (x *Execution) Waiting() (on []WaitKind, waits []Wait) {
	for _, kind := range WaitKinds() {
		if x.waitCount[kind] > 0 || kind == WaitUpdate && len(x.openUpdates) > 0 {
			on = append(on, kind)
		}
	}
	for _, id := range x.others[:min(len(x.others), MaxWaits)] {
		o := x.open[id]
		w := Wait{Kind: waitKinds[o.kind], ScheduleID: id, Name: o.name, Since: o.at, Persistent: o.kind == ExternalSubscribedPersistent}
		switch w.Kind {
		case WaitTimer:
			w.Due = &o.due
		case WaitChild:
			w.ID = x.children[id]
		}
		waits = append(waits, w)
	}
	for _, id := range x.openUpdates[:min(len(x.openUpdates), MaxWaits-len(waits))] {
		u := x.updates[id]
		waits = append(waits, Wait{Kind: WaitUpdate, Name: u.name, ID: id, Since: u.at})
	}
	if len(on) == 0 && x.updatable && x.status == StatusRunning {
		on, waits = []WaitKind{WaitUpdate}, []Wait{{Kind: WaitUpdate}}
	}
	return on, waits
}

// opened records the operation o, begun by schedule event id, as open.
func (x *Execution) opened(id int64, o open) {
	x.open[id] = o
	kind, ok := waitKinds[o.kind]
	if !ok {
		return
	}
	x.waitCount[kind]++
	if kind != WaitActivity {
		x.others = insertSorted(x.others, id)
	}
}

// closed records the operation begun by schedule event id as answered
// or cancelled, and returns it.
func (x *Execution) closed(id int64) open {
	o, ok := x.open[id]
	if !ok {
		return o
	}
	delete(x.open, id)
	if kind, ok := waitKinds[o.kind]; ok {
		x.waitCount[kind]--
		if kind != WaitActivity {
			x.others = deleteSorted(x.others, id)
		}
	}
	return o
}

// accepted records update id as accepted, its handler yet to answer.
func (x *Execution) accepted(id string, u acceptedUpdate) {
	x.updates[id] = u
	x.openUpdates = insertSorted(x.openUpdates, id)
}

// answered records that the handler of update id answered.
func (x *Execution) answered(id string) {
	u := x.updates[id]
	u.open = false
	x.updates[id] = u
	x.openUpdates = deleteSorted(x.openUpdates, id)
}

// insertSorted inserts v into the sorted s, where it is not; at the end,
// where a schedule event's id goes, it costs no copy.
func insertSorted[T cmp.Ordered](s []T, v T) []T {
	i, _ := slices.BinarySearch(s, v)
	return slices.Insert(s, i, v)
}

// deleteSorted deletes v from the sorted s, if it is there.
func deleteSorted[T cmp.Ordered](s []T, v T) []T {
	if i, ok := slices.BinarySearch(s, v); ok {
		return slices.Delete(s, i, i+1)
	}
	return s
}
