package engine

import (
	"cmp"
	"maps"
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

// Waiting returns what the execution waits on, as far as it has applied
// history: its open operations in the order it scheduled them, then the
// updates whose handlers have not answered, by id. An execution whose
// guest handles updates (abi.ActivationResult.HandlesUpdates) and that
// waits on nothing else waits on an update, of no name.
func (x *Execution) Waiting() []Wait {
	var out []Wait
	for _, id := range slices.Sorted(maps.Keys(x.open)) {
		o := x.open[id]
		kind, ok := waitKinds[o.kind]
		if !ok {
			continue
		}
		w := Wait{Kind: kind, ScheduleID: id, Name: o.name, Since: o.at, Persistent: o.kind == ExternalSubscribedPersistent}
		switch kind {
		case WaitTimer:
			w.Due = &o.due
		case WaitChild:
			w.ID = x.children[id]
		}
		out = append(out, w)
	}
	var updates []Wait
	for id, u := range x.updates {
		if u.open {
			updates = append(updates, Wait{Kind: WaitUpdate, Name: u.name, ID: id, Since: u.at})
		}
	}
	slices.SortFunc(updates, func(a, b Wait) int { return cmp.Compare(a.ID, b.ID) })
	out = append(out, updates...)
	if len(out) == 0 && x.updatable && x.status == StatusRunning {
		out = append(out, Wait{Kind: WaitUpdate})
	}
	return out
}
