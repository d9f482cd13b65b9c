// Package storetest is the conformance suite of store.Store: the behaviours
// the engine and the host's dispatchers rely on, checked through the
// interface only. Every implementation runs it from a test of its own:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := mystore.Open(...) // empty, and closed when t ends (closed once more, after the Ping test's Close)
//			...
//		})
//	}
//
// The suite uses whole seconds and scalar JSON (strings, numbers), so a
// store may keep times to the microsecond and normalise JSON. Times go in
// as the suite chooses them: the store must not read its own clock to
// decide what is due or leased.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Run runs the suite, each subtest on a fresh store from open. open returns
// an empty store and arranges for it to be closed when t ends.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		test func(f *fixture)
	}{
		{"Modules", testModules},
		{"ModulesWithWork", testModulesWithWork},
		{"CreateInstance", testCreateInstance},
		{"MessagesOldestFirst", testMessagesOldestFirst},
		{"OldestMessageServedFirst", testOldestMessageServedFirst},
		{"CommitAppliesEverything", testCommitAppliesEverything},
		{"FailedCommitChangesNothing", testFailedCommitChangesNothing},
		{"InstanceLease", testInstanceLease},
		{"LockSeveral", testLockSeveral},
		{"SkipModules", testSkipModules},
		{"ActivitiesFairAcrossInstances", testActivitiesFairAcrossInstances},
		{"HasWork", testHasWork},
		{"Abandon", testAbandon},
		{"ActivityLease", testActivityLease},
		{"Handoff", testHandoff},
		{"CreateAndTurn", testCreateAndTurn},
		{"ActivityLeaseExtended", testActivityLeaseExtended},
		{"ActivityTimeout", testActivityTimeout},
		{"TaskQueues", testTaskQueues},
		{"TaskQueuesFairAcrossInstances", testTaskQueuesFairAcrossInstances},
		{"Heartbeat", testHeartbeat},
		{"CompleteFromOutside", testCompleteFromOutside},
		{"ActivityCompletedOnce", testActivityCompletedOnce},
		{"ActivityResultForAnotherSchedule", testActivityResultForAnotherSchedule},
		{"ActivityRetry", testActivityRetry},
		{"ActivityRetryPurged", testActivityRetryPurged},
		{"RetriesDropped", testRetriesDropped},
		{"RetriesDroppedAtTheEnd", testRetriesDroppedAtTheEnd},
		{"ReleaseAllLeases", testReleaseAllLeases},
		{"Timers", testTimers},
		{"ContinueAsNew", testContinueAsNew},
		{"ContinueAsNewLeavesTheOldExecutionBehind", testContinueAsNewLeavesTheOldExecutionBehind},
		{"Children", testChildren},
		{"ChildOfAnEndedExecution", testChildOfAnEndedExecution},
		{"StartsFairAcrossParents", testStartsFairAcrossParents},
		{"Purge", testPurge},
		{"PurgeRefused", testPurgeRefused},
		{"PurgedParent", testPurgedParent},
		{"ListInstances", testListInstances},
		{"Waits", testWaits},
		{"CountInstances", testCountInstances},
		{"Attributes", testAttributes},
		{"Executions", testExecutions},
		{"EnqueueForAFinishedInstance", testEnqueueForAFinishedInstance},
		{"PersistentEventLimit", testPersistentEventLimit},
		{"Raises", testRaises},
		{"CreateWithEvent", testCreateWithEvent},
		{"Updates", testUpdates},
		{"DeleteModule", testDeleteModule},
		{"PurgeInstances", testPurgeInstances},
		{"DeleteExecutions", testDeleteExecutions},
		{"DropWaiting", testDropWaiting},
		{"QueueStats", testQueueStats},
		{"Ping", testPing},
		{"MoveInstance", testMoveInstance},
		{"MoveRefused", testMoveRefused},
		{"ResetInstance", testResetInstance},
		{"ResetRefused", testResetRefused},
		{"Schedules", testSchedules},
		{"Audit", testAudit},
		{"AuditWithChange", testAuditWithChange},
		{"Batches", testBatches},
		{"DeleteBatches", testDeleteBatches},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.test(newFixture(t, open)) })
	}
}

// newFixture opens a fresh store with module deployed.
func newFixture(t *testing.T, open func(t *testing.T) store.Store) *fixture {
	f := &fixture{t: t, s: open(t), open: open, ctx: context.Background()}
	f.must(f.s.PutModule(f.ctx, store.Module{Hash: module, Wasm: []byte("\x00asm"), Orchestrations: []string{orchestration}, Activities: []string{"Charge"}, DeployedAt: t0}), "PutModule")
	return f
}

// sub runs test as a subtest, on a fresh store.
func (f *fixture) sub(name string, test func(f *fixture)) {
	f.t.Run(name, func(t *testing.T) { test(newFixture(t, f.open)) })
}

// t0 is when every test begins. Its nanoseconds are there to be kept: an
// orchestration reads the time of the event it applies as its clock, live
// from the engine and on replay from the store, so a store that rounds a
// time makes the replay see another clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 6789, time.UTC)

const (
	// module is deployed in every test, registering orchestration.
	module        = "5ca1ab1e"
	orchestration = "Order"
	// lease is how long the suite locks work for.
	lease = time.Minute
)

// fixture is one test's store, with helpers that fail the test when the
// store does not do what they ask.
type fixture struct {
	t    *testing.T
	s    store.Store
	open func(t *testing.T) store.Store
	ctx  context.Context
}

func (f *fixture) must(err error, op string) {
	f.t.Helper()
	if err != nil {
		f.t.Fatalf("%s: %v", op, err)
	}
}

// wantErr fails the test unless err wraps want.
func (f *fixture) wantErr(err, want error, op string) {
	f.t.Helper()
	if !errors.Is(err, want) {
		f.t.Fatalf("%s returned %v; want an error wrapping %q", op, err, want)
	}
}

// input is the input of instance id: its id as a JSON string.
func input(id string) json.RawMessage { return json.RawMessage(strconv.Quote(id)) }

// create creates an instance of orchestration on module at t0.
func (f *fixture) create(id string) {
	f.t.Helper()
	f.must(f.s.CreateInstance(f.ctx, store.NewInstance{ID: id, Name: orchestration, ModuleHash: module, Input: input(id), Now: t0}), "CreateInstance "+id)
}

func (f *fixture) instance(id string) store.Instance {
	f.t.Helper()
	inst, err := f.s.GetInstance(f.ctx, id)
	f.must(err, "GetInstance "+id)
	return inst
}

func (f *fixture) enqueue(id string, ev engine.Event) {
	f.t.Helper()
	f.must(f.s.Enqueue(f.ctx, id, ev, t0, nil), "Enqueue for "+id)
}

// lockNext locks the next instance at now, if there is one.
func (f *fixture) lockNext(now time.Time) (*store.WorkItem, error) {
	f.t.Helper()
	items, err := f.s.LockNextInstances(f.ctx, now, lease, 1, nil)
	return only(f, "LockNextInstances", items, err)
}

// leaseNext leases the next activity task at now, if there is one.
func (f *fixture) leaseNext(now time.Time) (*store.ActivityWork, error) {
	f.t.Helper()
	ws, err := f.s.LockNextActivities(f.ctx, now, lease, 1, nil)
	return only(f, "LockNextActivities", ws, err)
}

// only returns the one piece of work a call with max 1 took, if any.
func only[W any](f *fixture, call string, taken []*W, err error) (*W, error) {
	f.t.Helper()
	switch len(taken) {
	case 0:
		return nil, err
	case 1:
		return taken[0], err
	}
	f.t.Fatalf("%s with max 1 took %d", call, len(taken))
	return nil, nil
}

// lock locks the next instance at now, and fails the test if there is none.
func (f *fixture) lock(now time.Time) *store.WorkItem {
	f.t.Helper()
	item, err := f.lockNext(now)
	if err != nil || item == nil {
		f.t.Fatalf("LockNextInstances at %s = %v, %v; want an instance", clock(now), item, err)
	}
	return item
}

// lockID locks instance id at now: it locks instances until it has id, and
// abandons the others. It fails the test if id has no work.
func (f *fixture) lockID(now time.Time, id string) *store.WorkItem {
	f.t.Helper()
	var others []*store.WorkItem
	defer func() {
		for _, o := range others {
			f.must(f.s.AbandonInstance(f.ctx, o.Instance.ID, o.LockToken), "AbandonInstance "+o.Instance.ID)
		}
	}()
	for {
		item, err := f.lockNext(now)
		f.must(err, "LockNextInstances")
		if item == nil {
			f.t.Fatalf("at %s, instance %q has no work; want some", clock(now), id)
		}
		if item.Instance.ID == id {
			return item
		}
		others = append(others, item)
	}
}

// noWork fails the test if an instance can be locked at now.
func (f *fixture) noWork(now time.Time) {
	f.t.Helper()
	if item, err := f.lockNext(now); item != nil || err != nil {
		f.t.Fatalf("LockNextInstances at %s = %+v, %v; want no work", clock(now), item, err)
	}
}

func (f *fixture) commit(c store.TurnCommit) {
	f.t.Helper()
	f.must(f.s.CommitTurn(f.ctx, c), "CommitTurn of "+c.InstanceID)
}

// run runs one turn of instance id at now: it locks the instance and
// commits events, consuming its messages. It returns the events with their
// ids.
func (f *fixture) run(id string, now time.Time, events ...engine.Event) []engine.Event {
	f.t.Helper()
	c := turn(f.lockID(now, id), events...)
	f.commit(c)
	return c.NewEvents
}

// lease leases the next activity task at now, and fails the test if there
// is none.
func (f *fixture) lease(now time.Time) *store.ActivityWork {
	f.t.Helper()
	w, err := f.leaseNext(now)
	if err != nil || w == nil {
		f.t.Fatalf("LockNextActivities at %s = %v, %v; want a task", clock(now), w, err)
	}
	return w
}

// noActivity fails the test if an activity task can be leased at now.
func (f *fixture) noActivity(now time.Time) {
	f.t.Helper()
	if w, err := f.leaseNext(now); w != nil || err != nil {
		f.t.Fatalf("LockNextActivities at %s = %+v, %v; want no task", clock(now), w, err)
	}
}

// history fails the test unless execution's history of id is want.
func (f *fixture) history(id string, execution int64, want []engine.Event) {
	f.t.Helper()
	got, err := f.s.History(f.ctx, id, execution)
	f.must(err, "History")
	f.same("history of "+id+" execution "+strconv.FormatInt(execution, 10), got, want)
}

// messages fails the test unless the instance locked in item has exactly
// the messages want, oldest first.
func (f *fixture) messages(item *store.WorkItem, want ...engine.Event) {
	f.t.Helper()
	var got []engine.Event
	for _, m := range item.Messages {
		got = append(got, m.Event)
	}
	f.same("messages of "+item.Instance.ID, got, want)
}

func clock(t time.Time) string { return t.Sub(t0).String() + " after t0" }
