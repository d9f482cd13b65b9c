package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// poll leases every task of p it can at now, one a call, and returns
// their names in the order they were handed out.
func (f *fixture) poll(now time.Time, p store.TaskPoll) []string {
	f.t.Helper()
	var names []string
	for {
		ws, err := f.s.LockQueuedActivities(f.ctx, now, lease, 1, p)
		f.must(err, "LockQueuedActivities")
		if len(ws) == 0 {
			return names
		}
		names = append(names, ws[0].Task.Name)
	}
}

// testTaskQueues: a task on a named queue is the workers' of that queue:
// the host's own leases (LockNextActivities) pass over it, and a worker's
// poll takes only its queue's tasks of the names it serves; a poll with a
// bad queue or name is refused.
func testTaskQueues(f *fixture) {
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), scheduled("Local"), queued("Charge", "payments"), queued("Refund", "payments"),
		queued("Ship", "shipping"))
	tasks, err := f.s.ActivityTasks(f.ctx, "i1", t0, 2)
	f.must(err, "ActivityTasks")
	if len(tasks) != 2 || tasks[0].Name != "Local" || tasks[0].Running || tasks[0].Attempt != 0 || tasks[1].Queue != "payments" {
		f.t.Fatalf("ActivityTasks with max 2 = %+v; want the first two, Local and Charge on payments, waiting, never delivered", tasks)
	}
	if names := f.activities(t0); !slices.Equal(names, []string{"Local"}) {
		f.t.Fatalf("the host's own leases took %q; want only the task of no queue, [Local]", names)
	}
	queues := func(want ...store.TaskQueueStats) {
		f.t.Helper()
		q, err := f.s.QueueStats(f.ctx, t0)
		f.must(err, "QueueStats")
		if !slices.Equal(q.Queues, want) {
			f.t.Fatalf("QueueStats.Queues = %+v; want %+v", q.Queues, want)
		}
	}
	queues(store.TaskQueueStats{Queue: "payments", Waiting: 2}, store.TaskQueueStats{Queue: "shipping", Waiting: 1})
	if names := f.poll(t0, store.TaskPoll{Queue: "payments", Names: []string{"Refund"}}); !slices.Equal(names, []string{"Refund"}) {
		f.t.Fatalf("a poll of payments for Refund took %q; want [Refund]", names)
	}
	if names := f.poll(t0, store.TaskPoll{Queue: "payments"}); !slices.Equal(names, []string{"Charge"}) {
		f.t.Fatalf("a poll of payments for any name took %q; want what was left, [Charge]", names)
	}
	ws, err := f.s.LockQueuedActivities(f.ctx, t0, lease, 5, store.TaskPoll{Queue: "shipping"})
	f.must(err, "LockQueuedActivities")
	if len(ws) != 1 || ws[0].Task.Name != "Ship" || ws[0].Task.Queue != "shipping" || ws[0].Attempt != 1 || ws[0].InstanceID != "i1" {
		f.t.Fatalf("a poll of shipping leased %+v; want Ship of i1, on shipping, attempt 1", ws)
	}
	queues(store.TaskQueueStats{Queue: "payments", Running: 2}, store.TaskQueueStats{Queue: "shipping", Running: 1})
	f.must(f.s.CompleteActivity(f.ctx, ws[0], activityCompleted(ws[0].Task.ScheduleID, `"shipped"`), t0), "CompleteActivity of a queued task")
	var te *abi.TextError
	for _, bad := range []store.TaskPoll{{}, {Queue: "pay ments"}, {Queue: "payments", Names: []string{""}}} {
		if _, err := f.s.LockQueuedActivities(f.ctx, t0, lease, 1, bad); !errors.As(err, &te) {
			f.t.Errorf("LockQueuedActivities(%+v) = %v; want the *abi.TextError that says what is wrong", bad, err)
		}
	}
}

// testTaskQueuesFairAcrossInstances: within a queue, tasks are leased
// fairly across instances, as the host's own are; a queue whose tasks
// wait (no worker serves it) does not change the order of another.
func testTaskQueuesFairAcrossInstances(f *fixture) {
	f.create("burst")
	f.create("hello")
	burst := []engine.Event{started("burst", input("burst"))}
	for i := range 4 {
		burst = append(burst, queued(fmt.Sprintf("B%d", i), "q"), queued(fmt.Sprintf("W%d", i), "idle"))
	}
	f.commit(turn(f.lockID(t0, "burst"), burst...))
	if names := f.poll(t0, store.TaskPoll{Queue: "q", Names: []string{"B0", "B1"}}); !slices.Equal(names, []string{"B0", "B1"}) {
		f.t.Fatalf("the first polls took %q; want [B0 B1]", names)
	}
	f.commit(turn(f.lockID(t0, "hello"), started("hello", input("hello")), queued("H0", "q"), queued("H1", "q")))
	if names := f.poll(t0, store.TaskPoll{Queue: "q"}); !slices.Equal(names, []string{"B2", "H0", "B3", "H1"}) {
		f.t.Fatalf("the tasks of q were leased in the order %q; want the two instances in turn, [B2 H0 B3 H1]", names)
	}
	if names := f.poll(t0, store.TaskPoll{Queue: "idle"}); len(names) != 4 {
		f.t.Fatalf("the tasks of idle were leased as %q; want the 4 that waited", names)
	}
}

// testHeartbeat: a heartbeat extends the lease and keeps its details,
// which the task's next delivery gets; a call with a heartbeat timeout is
// leased for that timeout only, so a worker that stops sending heartbeats
// loses it then; a heartbeat with a lost lease is refused.
func testHeartbeat(f *fixture) {
	f.create("i1")
	beating := queued("Transcode", "media")
	beating.HeartbeatTimeoutMs = 10_000
	f.run("i1", t0, started("i1", input("i1")), beating)
	poll := func(now time.Time) *store.ActivityWork {
		f.t.Helper()
		ws, err := f.s.LockQueuedActivities(f.ctx, now, lease, 1, store.TaskPoll{Queue: "media"})
		f.must(err, "LockQueuedActivities")
		if len(ws) == 0 {
			return nil
		}
		return ws[0]
	}
	first := poll(t0)
	if first == nil || first.Task.HeartbeatTimeout != 10*time.Second || first.Heartbeat != nil {
		f.t.Fatalf("first delivery %+v; want Transcode with a heartbeat timeout of 10s and no heartbeat yet", first)
	}
	if lease <= 10*time.Second {
		f.t.Fatalf("the suite's lease (%s) must be longer than the heartbeat timeout it tests", lease)
	}
	if again := poll(t0.Add(9 * time.Second)); again != nil {
		f.t.Fatalf("delivered again before its heartbeat timeout: %+v", again)
	}
	f.must(f.s.Heartbeat(f.ctx, first, json.RawMessage(`{"frame":40}`), t0.Add(9*time.Second), first.Task.HeartbeatTimeout), "Heartbeat")
	tasks, err := f.s.ActivityTasks(f.ctx, "i1", t0.Add(9*time.Second), 10)
	f.must(err, "ActivityTasks")
	if len(tasks) != 1 || !tasks[0].Running || tasks[0].Attempt != 1 || tasks[0].Queue != "media" || tasks[0].Name != "Transcode" || string(tasks[0].Heartbeat) != `{"frame":40}` {
		f.t.Fatalf("ActivityTasks = %+v; want Transcode on media, running its attempt 1, with the heartbeat's details", tasks)
	}
	if again := poll(t0.Add(15 * time.Second)); again != nil {
		f.t.Fatalf("delivered again 6s after a heartbeat with a 10s timeout: %+v", again)
	}
	f.must(f.s.Heartbeat(f.ctx, first, nil, t0.Add(15*time.Second), first.Task.HeartbeatTimeout), "Heartbeat without details")
	second := poll(t0.Add(26 * time.Second))
	if second == nil {
		f.t.Fatal("not delivered again 11s after the last heartbeat, past its 10s timeout")
	}
	f.sameDelivery("activity task", first.LockToken, second.LockToken, first.Attempt, second.Attempt)
	if string(second.Heartbeat) != `{"frame":40}` {
		f.t.Fatalf("the next delivery got heartbeat %s; want the last details sent, {\"frame\":40}", second.Heartbeat)
	}
	f.wantErr(f.s.Heartbeat(f.ctx, first, json.RawMessage(`{"frame":41}`), t0.Add(26*time.Second), time.Minute), store.ErrLeaseLost,
		"Heartbeat by the worker whose lease was handed on")
	f.must(f.s.CompleteActivity(f.ctx, second, activityCompleted(second.Task.ScheduleID, `"done"`), t0.Add(27*time.Second)), "CompleteActivity")
	if tasks, err := f.s.ActivityTasks(f.ctx, "i1", t0.Add(27*time.Second), 10); err != nil || len(tasks) != 0 {
		f.t.Fatalf("ActivityTasks after the completion = %+v, %v; want none", tasks, err)
	}
	f.wantErr(f.s.Heartbeat(f.ctx, second, nil, t0.Add(27*time.Second), time.Minute), store.ErrLeaseLost, "Heartbeat of a completed task")
}
