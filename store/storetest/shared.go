package storetest

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// RunShared runs the suite of a store that several hosts share: open
// returns two stores on one empty database, as two hosts with their own
// ids open it, each closed when t ends.
func RunShared(t *testing.T, open func(t *testing.T) (store.Store, store.Store)) {
	tests := []struct {
		name string
		test func(f *fixture, other store.Store)
	}{
		{"NoInstanceLockedTwice", testNoInstanceLockedTwice},
		{"NoActivityLeasedTwice", testNoActivityLeasedTwice},
		{"StaleCommitRefused", testStaleCommitRefused},
		{"ReleaseOwnLeases", testReleaseOwnLeases},
		{"ScheduleFiredOnce", testScheduleFiredOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := open(t)
			f := &fixture{t: t, s: a, ctx: t.Context()}
			f.must(a.PutModule(f.ctx, store.Module{Hash: module, Wasm: []byte("\x00asm"), Orchestrations: []string{orchestration}, Activities: []string{"Charge"}, DeployedAt: t0}), "PutModule")
			tt.test(f, b)
		})
	}
}

// takeAll has both stores take work with take, four workers each at once,
// until none is left, and returns what each took.
func takeAll(f *fixture, stores []store.Store, take func(s store.Store) ([]string, error)) [][]string {
	f.t.Helper()
	took := make([][]string, len(stores))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range stores {
		for range 4 {
			wg.Go(func() {
				for {
					ids, err := take(s)
					if err != nil {
						f.t.Errorf("take: %v", err)
						return
					}
					if len(ids) == 0 {
						return
					}
					mu.Lock()
					took[i] = append(took[i], ids...)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return took
}

// testNoInstanceLockedTwice: hosts locking at once never lock the same
// instance, and between them lock every one.
func testNoInstanceLockedTwice(f *fixture, other store.Store) {
	const n = 60
	var want []string
	for i := range n {
		id := "i" + strconv.Itoa(i)
		f.create(id)
		want = append(want, id)
	}
	took := takeAll(f, []store.Store{f.s, other}, func(s store.Store) ([]string, error) {
		items, err := s.LockNextInstances(f.ctx, t0, lease, 3, nil)
		var ids []string
		for _, it := range items {
			ids = append(ids, it.Instance.ID)
		}
		return ids, err
	})
	all := slices.Concat(took...)
	slices.Sort(all)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		f.t.Fatalf("the hosts locked %d instances, %v; want each of the %d once", len(all), all, n)
	}
}

// testNoActivityLeasedTwice: hosts leasing at once never lease the same
// activity task.
func testNoActivityLeasedTwice(f *fixture, other store.Store) {
	const n = 30
	f.create("i1")
	events := []engine.Event{started("i1", input("i1"))}
	for range n {
		events = append(events, scheduled("Charge"))
	}
	f.run("i1", t0, events...)
	took := takeAll(f, []store.Store{f.s, other}, func(s store.Store) ([]string, error) {
		ws, err := s.LockNextActivities(f.ctx, t0, lease, 2, nil)
		var ids []string
		for _, w := range ws {
			ids = append(ids, strconv.FormatInt(w.Task.ScheduleID, 10))
		}
		return ids, err
	})
	all := slices.Concat(took...)
	slices.Sort(all)
	if len(all) != n || len(slices.Compact(all)) != n {
		f.t.Fatalf("the hosts leased %d tasks, %v; want each of the %d once", len(all), all, n)
	}
}

// testStaleCommitRefused: a host whose lock expired and whose instance
// another host took over cannot commit the turn the other has committed,
// nor complete an activity the other took over.
func testStaleCommitRefused(f *fixture, other store.Store) {
	f.withActivity()
	f.enqueue("i1", raised("Go"))
	stale := f.lock(t0)
	later := t0.Add(lease + time.Second)
	items, err := other.LockNextInstances(f.ctx, later, lease, 1, nil)
	if err != nil || len(items) != 1 || items[0].Instance.ID != "i1" {
		f.t.Fatalf("the other host's LockNextInstances once the lock expired = %v, %v; want i1", items, err)
	}
	won := turn(items[0], raised("Go"), completed(`"won"`))
	f.must(other.CommitTurn(f.ctx, won), "the other host's CommitTurn")
	f.wantErr(f.s.CommitTurn(f.ctx, turn(stale, raised("Go"), completed(`"stale"`))), store.ErrLeaseLost, "the stale host's late CommitTurn")
	f.history("i1", 0, append(f.mustHistory("i1", 0)[:2], won.NewEvents...))

	slow := f.lease(t0)
	ws, err := other.LockNextActivities(f.ctx, later, lease, 1, nil)
	if err != nil || len(ws) != 1 {
		f.t.Fatalf("the other host's LockNextActivities once the lease expired = %v, %v; want the task", ws, err)
	}
	f.must(other.CompleteActivity(f.ctx, ws[0], activityCompleted(ws[0].Task.ScheduleID, `"fast"`), later), "the other host's CompleteActivity")
	f.wantErr(f.s.CompleteActivity(f.ctx, slow, activityCompleted(slow.Task.ScheduleID, `"slow"`), later), store.ErrLeaseLost, "the stale host's CompleteActivity")
}

// testReleaseOwnLeases: a host that starts again releases its own leases,
// not those of the hosts still running.
func testReleaseOwnLeases(f *fixture, other store.Store) {
	f.create("mine")
	f.create("theirs")
	mine := f.lockID(t0, "mine")
	theirs, err := other.LockNextInstances(f.ctx, t0, lease, 1, nil)
	if err != nil || len(theirs) != 1 || theirs[0].Instance.ID != "theirs" {
		f.t.Fatalf("the other host's LockNextInstances = %v, %v; want theirs", theirs, err)
	}
	f.must(f.s.ReleaseAllLeases(f.ctx), "ReleaseAllLeases")
	again := f.lockID(t0, "mine")
	if again.LockToken == mine.LockToken {
		f.t.Fatal("the released instance was locked again with the old token")
	}
	f.noWork(t0)
	f.must(other.CommitTurn(f.ctx, turn(theirs[0], started("theirs", input("theirs")))), "the other host's CommitTurn after the release")
}
