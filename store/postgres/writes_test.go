package postgres

import (
	"context"
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
)

// TestHelloWritesOnPostgres counts, in pg_stat_user_tables, the row
// versions (inserted, updated, deleted) a hello writes through the
// store's handoffs, as a host on PostgreSQL runs it: CreateAndTurn, the
// instance written with its first turn, which leases its one activity
// task, and the CompleteAndTurn of its result with the last turn. Each
// table's bound is what the hello writes of it: the instance inserted as
// its first turn leaves it and updated by the last turn's commit (it was
// 4: the lock an update of its own; then 3, the row inserted locked, or
// inserted and updated by the first turn in one transaction); no message (it was 4: the result's message inserted and deleted
// in one transaction, where now the turn takes the result unwritten; then
// 2, the start inserted and consumed, where now the first turn commits
// with the instance and takes the start unwritten); the task inserted
// leased and deleted with its result (it was 3: the lease an update of
// its own, not HOT). The counts are read once the store's connections
// have ended, which flushes their statistics.
func TestHelloWritesOnPostgres(t *testing.T) {
	t.Parallel()
	base := pgtest.Schema(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	hostID := "writes-" + u.Query().Get("search_path")
	ctx := context.Background()
	s, err := Open(base, Options{HostID: hostID})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	if err := s.PutModule(ctx, store.Module{Hash: "m", Wasm: []byte("\x00asm"), Orchestrations: []string{"Hello"}, Activities: []string{"Greet"}, DeployedAt: t0}); err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`"world"`)
	consumed := func(it *store.WorkItem) []int64 {
		var ids []int64
		for _, m := range it.Messages {
			ids = append(ids, m.ID)
		}
		return ids
	}
	turned, ws, err := s.CreateAndTurn(ctx, store.NewInstance{ID: "hello", Name: "Hello", ModuleHash: "m", Input: in, Now: t0}, time.Minute,
		func(it *store.WorkItem) (*store.TurnCommit, int) {
			return &store.TurnCommit{InstanceID: "hello", ExecutionID: it.Instance.ExecutionID, LockToken: it.LockToken, Now: t0, Status: engine.StatusRunning,
				NewEvents: []engine.Event{
					{ID: 1, Kind: engine.OrchestrationStarted, Name: "Hello", InstanceID: "hello", Input: in, Time: t0},
					{ID: 2, Kind: engine.ActivityScheduled, Name: "Greet", Input: in, Time: t0}},
				Activities: []engine.ActivityTask{{ScheduleID: 2, Name: "Greet", Input: in}},
				Consumed:   consumed(it)}, 1
		})
	if err != nil || !turned || len(ws) != 1 {
		t.Fatalf("CreateAndTurn: turned %v, leased %+v, %v; want the first turn committed and Greet leased", turned, ws, err)
	}
	greeting := json.RawMessage(`"hello, world"`)
	now := t0.Add(time.Second)
	turned, _, err = s.CompleteAndTurn(ctx, ws[0], engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 2, Result: greeting}, now, time.Minute,
		func(it *store.WorkItem) (*store.TurnCommit, int) {
			return &store.TurnCommit{InstanceID: "hello", ExecutionID: it.Instance.ExecutionID, LockToken: it.LockToken, Now: now,
				Status: engine.StatusCompleted, Result: greeting,
				NewEvents: []engine.Event{
					{ID: 3, Kind: engine.ActivityCompleted, ScheduleID: 2, Result: greeting, Time: now},
					{ID: 4, Kind: engine.OrchestrationCompleted, Result: greeting, Time: now}},
				Consumed: consumed(it)}, 0
		})
	if err != nil || !turned {
		t.Fatalf("CompleteAndTurn: turned %v, %v; want the last turn committed", turned, err)
	}
	if inst, err := s.GetInstance(ctx, "hello"); err != nil || inst.Status != engine.StatusCompleted {
		t.Fatalf("the hello is %s, %v; want it Completed", inst.Status, err)
	}
	s.Close()

	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var left int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1`, "durabox "+hostID+"%").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections of the store still open 30 s after it closed", left)
		}
	}
	for _, want := range []struct {
		table    string
		versions int64
	}{
		{"instances", 2},
		{"messages", 0},
		{"activity_tasks", 2},
	} {
		var ins, upd, del int64
		err := conn.QueryRow(ctx, `SELECT n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = $1`,
			want.table).Scan(&ins, &upd, &del)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d row versions (%d inserted, %d updated, %d deleted)", want.table, ins+upd+del, ins, upd, del)
		if ins+upd+del > want.versions {
			t.Errorf("a hello wrote %d row versions of %s (%d inserted, %d updated, %d deleted); want at most %d", ins+upd+del, want.table, ins, upd, del, want.versions)
		}
	}
}

// TestCommitLeasesAsAFetchDoes: the tasks a turn's commit leases as it
// inserts them (CommitTurnLeasing) are handed, and their rows hold, what
// a fetch of the same tasks after a plain CommitTurn hands and writes:
// the same work, each delivery counted once, the lease's end (the
// heartbeat timeout's for a task that has one), owner and token, one for
// each task; the task on a named queue is left to its workers.
func TestCommitLeasesAsAFetchDoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	tasks := []engine.ActivityTask{
		{ScheduleID: 2, Name: "Charge", Input: json.RawMessage(`{"cents":300}`), Timeout: 90 * time.Second,
			HeartbeatTimeout: 5 * time.Second, Retry: &engine.RetryPolicy{MaximumAttempts: 3, InitialIntervalMs: 1000}},
		{ScheduleID: 3, Name: "Ship", Queue: "outside"},
		{ScheduleID: 4, Name: "Notify"},
	}
	type row struct {
		Schedule, Until int64
		Owner           string
		Attempt         int
		Token           bool // the lease's token and the task's id
	}
	// run commits the turn that queues tasks in a store of its own, with
	// leasing or with CommitTurn and then a fetch, and returns the tasks
	// handed and the rows of all of them.
	run := func(leasing bool) ([]*store.ActivityWork, []row) {
		s := openTest(t, Options{HostID: "lease-test"})
		if err := s.PutModule(ctx, store.Module{Hash: "m", Wasm: []byte("\x00asm"), Orchestrations: []string{"Hello"}, DeployedAt: t0}); err != nil {
			t.Fatal(err)
		}
		item, err := s.CreateLocked(ctx, store.NewInstance{ID: "i1", Name: "Hello", ModuleHash: "m", Input: json.RawMessage(`"world"`), Now: t0}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		events := []engine.Event{{ID: 1, Kind: engine.OrchestrationStarted, Name: "Hello", InstanceID: "i1", Input: json.RawMessage(`"world"`), Time: t0}}
		for _, a := range tasks {
			events = append(events, engine.Event{ID: a.ScheduleID, Kind: engine.ActivityScheduled, Name: a.Name, Input: a.Input, TaskQueue: a.Queue, Time: t0})
		}
		c := store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: t0, NewEvents: events,
			Activities: tasks, Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}}
		var ws []*store.ActivityWork
		if leasing {
			ws, err = s.CommitTurnLeasing(ctx, c, time.Minute, 10)
		} else if err = s.CommitTurn(ctx, c); err == nil {
			ws, err = s.LockNextActivities(ctx, t0, time.Minute, 10, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.pool.Query(ctx, `SELECT schedule_id, locked_until, coalesce(lock_owner, ''), attempt, coalesce(lock_token LIKE '%.' || id, false)
			FROM activity_tasks ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var x row
			return x, r.Scan(&x.Schedule, &x.Until, &x.Owner, &x.Attempt, &x.Token)
		})
		if err != nil {
			t.Fatal(err)
		}
		tokens := map[string]bool{}
		for _, w := range ws {
			tokens[w.LockToken] = true
			w.LockToken = ""
		}
		if len(tokens) != len(ws) {
			t.Errorf("leasing %v: %d tasks handed with %d tokens; want one each", leasing, len(ws), len(tokens))
		}
		return ws, rs
	}
	leased, leasedRows := run(true)
	fetched, fetchedRows := run(false)
	if !reflect.DeepEqual(leased, fetched) {
		l, _ := json.MarshalIndent(leased, "", "  ")
		f, _ := json.MarshalIndent(fetched, "", "  ")
		t.Errorf("CommitTurnLeasing handed\n%s\na fetch of the same tasks hands\n%s", l, f)
	}
	if len(leased) != 2 {
		t.Errorf("CommitTurnLeasing handed %d tasks; want Charge and Notify, the two on the host's own queue", len(leased))
	}
	if !reflect.DeepEqual(leasedRows, fetchedRows) {
		t.Errorf("the tasks' rows after CommitTurnLeasing:\n%+v\nafter a fetch of the same tasks:\n%+v", leasedRows, fetchedRows)
	}
}
