package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// toVersion18 undoes what version 19 changed.
const toVersion18 = `
	DROP INDEX batches_state; DROP TABLE batches; DROP TABLE batch_items;
	PRAGMA user_version = 18;`

// toVersion17 undoes what versions 19 and 18 changed.
const toVersion17 = toVersion18 + `
	DROP INDEX audit_log_at; DROP TABLE audit_log;
	PRAGMA user_version = 17;`

// toVersion16 undoes what versions 19 to 17 changed.
const toVersion16 = toVersion17 + `
	DROP INDEX messages_start; DROP INDEX messages_parent;
	ALTER TABLE messages DROP COLUMN fair_rank; ALTER TABLE messages DROP COLUMN parent_id;
	PRAGMA user_version = 16;`

// toVersion15 undoes what versions 19 to 16 changed.
const toVersion15 = toVersion16 + `
	DROP TABLE instance_attributes;
	PRAGMA user_version = 15;`

// toVersion14 undoes what versions 19 to 15 changed.
const toVersion14 = toVersion15 + `
	ALTER TABLE instances DROP COLUMN waiting_on; ALTER TABLE instances DROP COLUMN waits;
	PRAGMA user_version = 14;`

// toVersion13 undoes what versions 19 to 14 changed.
const toVersion13 = toVersion14 + `
	ALTER TABLE activity_tasks DROP COLUMN pending_token;
	PRAGMA user_version = 13;`

// toVersion12 undoes what versions 19 to 13 changed.
const toVersion12 = toVersion13 + `
	DROP INDEX schedule_runs_schedule; DROP TABLE schedule_runs; DROP TABLE schedules;
	PRAGMA user_version = 12;`

// toVersion11 undoes what versions 19 to 12 changed.
const toVersion11 = toVersion12 + `
	DROP INDEX activity_tasks_visible;
	ALTER TABLE activity_tasks DROP COLUMN retry; ALTER TABLE activity_tasks DROP COLUMN failures;
	ALTER TABLE activity_tasks DROP COLUMN last_failure; ALTER TABLE activity_tasks DROP COLUMN visible_at;
	PRAGMA user_version = 11;`

// toVersion10 undoes what versions 19 to 11 changed.
const toVersion10 = toVersion11 + `
	DROP INDEX activity_tasks_fair; DROP INDEX activity_tasks_instance;
	ALTER TABLE activity_tasks DROP COLUMN queue;
	ALTER TABLE activity_tasks DROP COLUMN heartbeat_timeout_ms;
	ALTER TABLE activity_tasks DROP COLUMN heartbeat;` + indexes7 + `
	PRAGMA user_version = 10;`

// toVersion9 undoes what versions 19 to 10 changed.
const toVersion9 = toVersion10 + `
	DROP TABLE updates;
	PRAGMA user_version = 9;`

// toVersion8 undoes what versions 19 to 9 changed.
const toVersion8 = toVersion9 + `
	ALTER TABLE instances DROP COLUMN counted_run;
	ALTER TABLE instances ADD COLUMN lock_token TEXT;
	ALTER TABLE instances ADD COLUMN locked_until INTEGER NOT NULL DEFAULT 0;
	CREATE INDEX instances_locked ON instances(locked_until);
	ALTER TABLE activity_tasks DROP COLUMN counted_run;
	ALTER TABLE activity_tasks ADD COLUMN lock_token TEXT;
	ALTER TABLE activity_tasks ADD COLUMN locked_until INTEGER NOT NULL DEFAULT 0;
	CREATE INDEX activity_tasks_locked ON activity_tasks(locked_until);
	PRAGMA user_version = 8;`

// toVersion7 undoes what versions 19 to 8 changed.
const toVersion7 = toVersion8 + `
	ALTER TABLE activity_tasks DROP COLUMN timeout_ms;
	PRAGMA user_version = 7;`

// toVersion6 undoes what versions 19 to 7 changed.
const toVersion6 = toVersion7 + `
	DROP INDEX activity_tasks_fair; DROP INDEX activity_tasks_instance;
	ALTER TABLE activity_tasks DROP COLUMN fair_rank;
	PRAGMA user_version = 6;`

// toVersion5 undoes what versions 19 to 6 changed.
const toVersion5 = toVersion6 + `
	DROP INDEX continued_executions_ended; DROP INDEX instances_status; DROP INDEX instances_name; DROP INDEX instances_module;
	DROP INDEX instances_parent; DROP INDEX instances_finished;
	DROP TABLE continued_executions;
	ALTER TABLE messages DROP COLUMN enqueued_at; ALTER TABLE activity_tasks DROP COLUMN enqueued_at;
	ALTER TABLE instances DROP COLUMN persistent_taken;
	PRAGMA user_version = 5;`

// schemaOf describes a database's tables, their columns and its indexes
// (with their columns and conditions), to compare a migrated database
// with a new one.
func schemaOf(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	type object struct{ kind, name, table, sql string }
	var objects []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.kind, &o.name, &o.table, &o.sql); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, o)
	}
	rows.Close()
	var out []string
	for _, o := range objects {
		pragma := "table_info"
		line := o.kind + " " + o.name + " on " + o.table
		if o.kind == "index" {
			pragma = "index_info"
			if _, where, ok := strings.Cut(o.sql, " WHERE "); ok {
				line += " where " + where
			}
		}
		cols, err := db.Query(fmt.Sprintf(`SELECT name FROM pragma_%s(?)`, pragma), o.name)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for cols.Next() {
			var c sql.NullString
			cols.Scan(&c)
			names = append(names, c.String)
		}
		cols.Close()
		if o.kind == "table" {
			// A column a migration adds comes last.
			slices.Sort(names)
		}
		out = append(out, line+" "+strings.Join(names, " "))
	}
	return out
}

// TestMigratesVersion5 opens a version-5 database with an instance that
// continued as new and took persistent events, and checks what version 6
// fills in for it, and that the result has the schema of a new database.
func TestMigratesVersion5(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v5.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	withInstance(t, s)
	create(t, s, "other")
	// Execution 1 takes a persistent event and continues as new at t0+1m;
	// execution 2 takes two, and waits with an activity task.
	persistent := func(id int64) engine.Event {
		ev := event(id, engine.ExternalEventPersistent)
		ev.Name, ev.Result = "P", json.RawMessage(`1`)
		return ev
	}
	item := lock(t, s, t0)
	ended := event(3, engine.OrchestrationContinuedAsNew)
	ended.Time = t0.Add(time.Minute + 1500*time.Microsecond)
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 1, LockToken: item.LockToken, Now: ended.Time,
		NewEvents: []engine.Event{event(1, engine.OrchestrationStarted), persistent(2), ended}, Status: engine.StatusContinuedAsNew,
		Consumed: []int64{item.Messages[0].ID}, ContinueAsNew: &engine.ContinueAsNew{Input: json.RawMessage(`2`), Started: engine.StartMessage("i1", "Greeting", json.RawMessage(`2`))}})
	item = lock(t, s, t0.Add(time.Hour))
	sched := event(4, engine.ActivityScheduled)
	sched.Name = "SayHello"
	commit(t, s, store.TurnCommit{InstanceID: "i1", ExecutionID: 2, LockToken: item.LockToken, Now: t0.Add(time.Hour),
		NewEvents:  []engine.Event{event(1, engine.OrchestrationStarted), persistent(2), persistent(3), sched},
		Activities: []engine.ActivityTask{{ScheduleID: 4, Name: "SayHello"}}, Status: engine.StatusRunning, Consumed: []int64{item.Messages[0].ID}})
	if _, err := s.db.Exec(toVersion5); err != nil {
		t.Fatal(err)
	}
	s.Close()

	before := time.Now().Add(-time.Second)
	s = openAt(t, path, Options{})
	fresh, _ := openTest(t)
	if got, want := schemaOf(t, s.db), schemaOf(t, fresh.db); !reflect.DeepEqual(got, want) {
		t.Fatalf("migrated schema:\n%s\nwant the schema of a new database:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var taken int
	var endedAt int64
	if err := s.db.QueryRow(`SELECT persistent_taken FROM instances WHERE id = 'i1'`).Scan(&taken); err != nil || taken != 2 {
		t.Fatalf("persistent events taken by execution 2: %d, %v; want 2", taken, err)
	}
	if err := s.db.QueryRow(`SELECT ended_at FROM continued_executions WHERE instance_id = 'i1' AND execution_id = 1`).Scan(&endedAt); err != nil ||
		!sqlstore.FromNanos(endedAt).Equal(ended.Time.Truncate(time.Millisecond).Add(time.Millisecond)) {
		t.Fatalf("execution 1 ended at %s, %v; want its last event's time to the millisecond, %s", sqlstore.FromNanos(endedAt), err, ended.Time)
	}
	stats, err := s.QueueStats(ctx, t0.Add(time.Hour))
	if err != nil || stats.OldestReady == nil || stats.OldestReady.Since.Before(before) || stats.OldestActivity == nil || stats.OldestActivity.Since.Before(before) {
		t.Fatalf("queue stats after migration: %+v, %v; want the messages and tasks there stored at the migration", stats, err)
	}
	// Versions 8 and 11 at work: the task there leaves its deadline to
	// the host, has no retry policy and no failure, and is visible at once.
	if ws, err := s.LockNextActivities(ctx, t0.Add(time.Hour), time.Minute, 1, nil); err != nil || len(ws) != 1 || ws[0].Task.Timeout != 0 ||
		ws[0].Task.Retry != nil || ws[0].Failures != 0 || ws[0].LastFailure != nil {
		t.Fatalf("LockNextActivities after migration = %+v, %v; want the SayHello task with no timeout of its own, no retry policy, no failure", ws, err)
	}
	// Version 6 at work: execution 1's history goes under retention, and
	// the limit counts what execution 2 took.
	if n, err := s.DeleteExecutions(ctx, t0.Add(time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("DeleteExecutions = %d, %v; want execution 1's", n, err)
	}
	ev := engine.Event{Kind: engine.ExternalEventPersistent, Name: "P"}
	if err := s.EnqueuePersistent(ctx, "i1", ev, 3, t0, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.EnqueuePersistent(ctx, "i1", ev, 3, t0, nil); err == nil {
		t.Fatal("a fourth persistent event with a limit of 3 was taken")
	}
}
