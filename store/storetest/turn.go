package storetest

import (
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// midway makes an instance "i1" that has run its first turn (history:
// OrchestrationStarted, ActivityScheduled("Charge") and TimerCreated due in
// an hour, with the task and the timer) and has a raised event "Approve"
// waiting, and another instance, "other", that has not started. It
// returns i1's history and i1 locked at t0+1s.
func (f *fixture) midway() ([]engine.Event, *store.WorkItem) {
	f.t.Helper()
	f.create("i1")
	f.create("other")
	first := f.run("i1", t0, started("i1", input("i1")), scheduled("Charge"), timerCreated(t0.Add(time.Hour)))
	f.enqueue("i1", raised("Approve"))
	return first, f.lockID(t0.Add(time.Second), "i1")
}

// busyTurn is a turn of the instance midway locked that changes everything
// a turn can change: it records the event Approve (4) and schedules an
// activity (5), a timer due at t0+2m (6) and a child (7); sets a custom
// status; and sends a message to "other" and one to an instance that does
// not exist (dropped).
func busyTurn(item *store.WorkItem) store.TurnCommit {
	status := "shipping"
	c := turn(item, raised("Approve"), scheduled("Ship"), timerCreated(t0.Add(2*time.Minute)), childScheduled("i1:7"),
		engine.Event{Kind: engine.CustomStatusSet, CustomStatus: status})
	c.Children = []store.NewChild{childOf("i1:7", 7, module)}
	c.CustomStatus = &status
	c.Outgoing = []store.Outgoing{{InstanceID: "other", Event: raised("Ping")}, {InstanceID: "nobody", Event: raised("Ping")}}
	return c
}

// testCommitAppliesEverything: a turn's commit applies all it carries.
func testCommitAppliesEverything(f *fixture) {
	first, item := f.midway()
	c := busyTurn(item)
	f.commit(c)
	f.afterBusyTurn(first, c, true)
}

// testFailedCommitChangesNothing: a commit that fails, for whatever
// reason, leaves history, messages, tasks, timers, children and the
// instance as they were.
func testFailedCommitChangesNothing(f *fixture) {
	shift := func(by int64) func(*fixture, *store.TurnCommit) {
		return func(_ *fixture, c *store.TurnCommit) {
			for i := range c.NewEvents {
				c.NewEvents[i].ID += by
			}
		}
	}
	tests := []struct {
		name  string
		spoil func(f *fixture, c *store.TurnCommit)
		// want is the error the commit must wrap; nil means any error.
		want error
	}{
		{"new events leave a gap", shift(1), nil},
		{"new events repeat an event id", shift(-1), nil},
		{"the last new event repeats an id of the turn", func(_ *fixture, c *store.TurnCommit) {
			c.NewEvents[len(c.NewEvents)-1].ID = c.NewEvents[len(c.NewEvents)-2].ID
		}, nil},
		{"another execution", func(_ *fixture, c *store.TurnCommit) { c.ExecutionID++ }, nil},
		{"a token that never held the lock", func(_ *fixture, c *store.TurnCommit) { c.LockToken = "not-the-lock-token" }, store.ErrLeaseLost},
		{"the lock was abandoned", func(f *fixture, c *store.TurnCommit) {
			f.must(f.s.AbandonInstance(f.ctx, c.InstanceID, c.LockToken), "AbandonInstance")
		}, store.ErrLeaseLost},
		{"the lock expired and was handed on", func(f *fixture, c *store.TurnCommit) {
			f.lockID(t0.Add(time.Second+lease+time.Second), c.InstanceID)
		}, store.ErrLeaseLost},
	}
	for _, tt := range tests {
		f.sub(tt.name, func(f *fixture) {
			first, item := f.midway()
			c := busyTurn(item)
			tt.spoil(f, &c)
			err := f.s.CommitTurn(f.ctx, c)
			if tt.want != nil {
				f.wantErr(err, tt.want, "CommitTurn")
			} else if err == nil {
				f.t.Fatal("CommitTurn succeeded; want it refused")
			}
			f.afterBusyTurn(first, c, false)
		})
	}
}

// afterBusyTurn checks the state midway and busyTurn c leave, whether the
// commit applied or changed nothing.
func (f *fixture) afterBusyTurn(first []engine.Event, c store.TurnCommit, applied bool) {
	f.t.Helper()
	history, status, activities := first, "", []string{"Charge"}
	i1Messages, otherMessages := []engine.Event{raised("Approve")}, []engine.Event{started("other", input("other"))}
	if applied {
		history, status, activities = append(slices.Clone(first), c.NewEvents...), "shipping", []string{"Charge", "Ship"}
		i1Messages, otherMessages = []engine.Event{timerFired(6, t0.Add(2*time.Minute))}, append(otherMessages, raised("Ping"))
	}
	f.history("i1", 1, history)
	if inst := f.instance("i1"); inst.Status != engine.StatusRunning || inst.CustomStatus != status || inst.ExecutionID != 1 {
		f.t.Fatalf("i1 is %s in execution %d with custom status %q; want Running in 1 with %q", inst.Status, inst.ExecutionID, inst.CustomStatus, status)
	}
	if _, err := f.s.GetInstance(f.ctx, "i1:7"); applied != (err == nil) {
		f.t.Fatalf("GetInstance of the child: %v; want it to exist only if the commit applied (%v)", err, applied)
	}
	if names := f.activities(t0); !slices.Equal(names, activities) {
		f.t.Fatalf("activity tasks %q; want %q", names, activities)
	}
	// By t0+5m every lock has expired and the turn's timer is due; the
	// first turn's is not.
	item := f.lockID(t0.Add(5*time.Minute), "i1")
	if want := int64(len(history)); item.HistoryLen != want {
		f.t.Fatalf("HistoryLen %d; want %d", item.HistoryLen, want)
	}
	f.messages(item, i1Messages...)
	f.messages(f.lockID(t0.Add(5*time.Minute), "other"), otherMessages...)
}
