package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// turn returns the commit of a turn of the instance locked in item that
// records events after its history (assigning their ids and times),
// consumes all its messages, and schedules the activities and timers the
// events record. Its status is Running unless an event ends the execution;
// its time is that of its last event.
func turn(item *store.WorkItem, events ...engine.Event) store.TurnCommit {
	c := store.TurnCommit{InstanceID: item.Instance.ID, ExecutionID: item.Instance.ExecutionID, LockToken: item.LockToken, Status: engine.StatusRunning,
		Now: t0.Add(time.Duration(item.HistoryLen+int64(len(events))) * time.Second)}
	for i, ev := range events {
		ev.ID = item.HistoryLen + int64(i) + 1
		ev.Time = t0.Add(time.Duration(ev.ID) * time.Second)
		switch ev.Kind {
		case engine.ActivityScheduled:
			c.Activities = append(c.Activities, engine.ActivityTask{ScheduleID: ev.ID, Name: ev.Name, Input: ev.Input, Timeout: time.Duration(ev.TimeoutMs) * time.Millisecond,
				Queue: ev.TaskQueue, HeartbeatTimeout: time.Duration(ev.HeartbeatTimeoutMs) * time.Millisecond, Retry: ev.Retry})
		case engine.TimerCreated:
			c.Timers = append(c.Timers, engine.TimerTask{ScheduleID: ev.ID, FireAt: *ev.FireAt})
		case engine.OrchestrationCompleted:
			c.Status, c.Result = engine.StatusCompleted, ev.Result
		case engine.OrchestrationFailed:
			c.Status, c.Failure = engine.StatusFailed, ev.Failure
		case engine.OrchestrationTerminated:
			c.Status, c.Failure = engine.StatusTerminated, &engine.Failure{Message: "terminated: " + ev.Reason}
		}
		c.NewEvents = append(c.NewEvents, ev)
	}
	for _, m := range item.Messages {
		c.Consumed = append(c.Consumed, m.ID)
	}
	return c
}

// started is the OrchestrationStarted of instance id, as a message: the
// engine's StartMessage.
func started(id string, in json.RawMessage) engine.Event {
	return engine.StartMessage(id, orchestration, in)
}

func scheduled(activity string) engine.Event {
	return engine.Event{Kind: engine.ActivityScheduled, Name: activity, Input: json.RawMessage(`"` + activity + `"`)}
}

// queued is scheduled on the task queue queue.
func queued(activity, queue string) engine.Event {
	ev := scheduled(activity)
	ev.TaskQueue = queue
	return ev
}

func timerCreated(due time.Time) engine.Event {
	return engine.Event{Kind: engine.TimerCreated, FireAt: &due}
}

func timerFired(schedule int64, due time.Time) engine.Event {
	return engine.Event{Kind: engine.TimerFired, ScheduleID: schedule, FireAt: &due}
}

func raised(name string) engine.Event {
	return engine.Event{Kind: engine.ExternalEvent, Name: name, Result: json.RawMessage(`"` + name + `"`)}
}

func persistent(name string) engine.Event {
	return engine.Event{Kind: engine.ExternalEventPersistent, Name: name, Result: json.RawMessage(`"` + name + `"`)}
}

func completed(result string) engine.Event {
	return engine.Event{Kind: engine.OrchestrationCompleted, Result: json.RawMessage(result)}
}

func failed(message string) engine.Event {
	return engine.Event{Kind: engine.OrchestrationFailed, Failure: &engine.Failure{Message: message}}
}

func activityCompleted(schedule int64, result string) engine.Event {
	return engine.Event{Kind: engine.ActivityCompleted, ScheduleID: schedule, Result: json.RawMessage(result)}
}

// same fails the test unless the events got are want, field by field
// (times compared as instants, JSON as written).
func (f *fixture) same(what string, got, want []engine.Event) {
	f.t.Helper()
	g, w := describe(got), describe(want)
	if g != w {
		f.t.Fatalf("%s:\n%s\nwant:\n%s", what, g, w)
	}
}

// describe writes events one per line, in a form where equal events read
// the same.
func describe(events []engine.Event) string {
	if len(events) == 0 {
		return "  (none)"
	}
	var b strings.Builder
	for _, ev := range events {
		ev.Time = ev.Time.UTC()
		if ev.FireAt != nil {
			due := ev.FireAt.UTC()
			ev.FireAt = &due
		}
		line, err := json.Marshal(ev)
		if err != nil {
			line = []byte(err.Error())
		}
		fmt.Fprintf(&b, "  %s\n", line)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// childScheduled records the start of the child id, which ChildOf
// describes to the store.
func childScheduled(id string) engine.Event {
	return engine.Event{Kind: engine.SubOrchestrationScheduled, Name: orchestration, InstanceID: id, Input: input(id)}
}

// childOf is the child id of the event schedule, on module hash.
func childOf(id string, schedule int64, hash string) store.NewChild {
	return store.NewChild{ID: id, Name: orchestration, ModuleHash: hash, Input: input(id), ScheduleID: schedule}
}
