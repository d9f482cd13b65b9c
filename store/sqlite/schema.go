package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// applicationID marks a SQLite file as a Durabox database ("DBX1").
const applicationID = 0x44425831

// schemaVersion is the version of the schema below. Raise it with a
// migration in migrations when the schema changes.
const schemaVersion = 19

// migrations[v] brings a database from version v to v+1.
var migrations = map[int]string{
	// Version 2: environment variables per deployed module.
	1: `ALTER TABLE modules ADD COLUMN env TEXT NOT NULL DEFAULT '[]';`,
	// Version 3: the parent of a child instance, and the parent's event that
	// waits for it.
	2: `ALTER TABLE instances ADD COLUMN parent_id TEXT; ALTER TABLE instances ADD COLUMN parent_schedule_id INTEGER;`,
	// Version 4: the custom status orchestrations set.
	3: `ALTER TABLE instances ADD COLUMN custom_status TEXT NOT NULL DEFAULT '';`,
	// Version 5: how many times an instance was locked since its last
	// commit, to give up on poison work.
	// Indexes on lock expiry, for NextVisibleAt.
	4: `ALTER TABLE instances ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
		CREATE INDEX IF NOT EXISTS instances_locked ON instances(locked_until);
		CREATE INDEX IF NOT EXISTS activity_tasks_locked ON activity_tasks(locked_until);`,
	// Version 6: when each message and activity task was stored (those
	// already there: at the migration), how many
	// persistent events the current execution took, when each execution
	// that continued as new ended (from its last event), and indexes for
	// listing, counting and purging instances by what they are.
	5: `ALTER TABLE messages ADD COLUMN enqueued_at INTEGER NOT NULL DEFAULT 0;
		ALTER TABLE activity_tasks ADD COLUMN enqueued_at INTEGER NOT NULL DEFAULT 0;
		UPDATE messages SET enqueued_at = CAST(unixepoch('now', 'subsec') * 1000 AS INTEGER) * 1000000;
		UPDATE activity_tasks SET enqueued_at = CAST(unixepoch('now', 'subsec') * 1000 AS INTEGER) * 1000000;
		ALTER TABLE instances ADD COLUMN persistent_taken INTEGER NOT NULL DEFAULT 0;
		UPDATE instances SET persistent_taken = (SELECT count(*) FROM history h
			WHERE h.instance_id = instances.id AND h.execution_id = instances.execution_id
			AND json_extract(h.payload, '$.kind') = 'ExternalEventPersistent');
		` + continuedExecutions + `
		INSERT INTO continued_executions (instance_id, execution_id, ended_at)
			SELECT h.instance_id, h.execution_id, CAST(round(unixepoch(json_extract(h.payload, '$.time'), 'subsec') * 1000) AS INTEGER) * 1000000
			FROM history h JOIN instances i ON i.id = h.instance_id
			WHERE h.execution_id < i.execution_id
			AND h.event_id = (SELECT max(event_id) FROM history WHERE instance_id = h.instance_id AND execution_id = h.execution_id);` + indexes6,
	// Version 7: each activity task's rank in the fair order of the
	// queue (see writeTx.QueueActivities); the tasks already there share rank 0,
	// and so are taken in the order they came.
	6: `ALTER TABLE activity_tasks ADD COLUMN fair_rank INTEGER NOT NULL DEFAULT 0;` + indexes7,
	// Version 8: the deadline of each attempt an orchestration set for
	// its activity call (durabox.WithTimeout), in milliseconds; 0, as for
	// the tasks already there, leaves it to the host.
	7: `ALTER TABLE activity_tasks ADD COLUMN timeout_ms INTEGER NOT NULL DEFAULT 0;`,
	// Version 9: instance locks and activity leases live in memory
	// (locks.go), so their columns go, and with them the ones a crashed
	// host left; a commit counts the next delivery in advance, naming the
	// store's run in counted_run (0, as for the rows already there: no
	// run).
	8: `DROP INDEX IF EXISTS instances_locked;
		ALTER TABLE instances DROP COLUMN lock_token;
		ALTER TABLE instances DROP COLUMN locked_until;
		ALTER TABLE instances ADD COLUMN counted_run INTEGER NOT NULL DEFAULT 0;
		DROP INDEX IF EXISTS activity_tasks_locked;
		ALTER TABLE activity_tasks DROP COLUMN lock_token;
		ALTER TABLE activity_tasks DROP COLUMN locked_until;
		ALTER TABLE activity_tasks ADD COLUMN counted_run INTEGER NOT NULL DEFAULT 0;`,
	// Version 10: the updates clients send instances, and their answers.
	9: updatesTable,
	// Version 11: each activity task's task queue ('' for the host's own,
	// as for the tasks already there), its heartbeat timeout and the
	// details of its last heartbeat; the fair order is kept per queue.
	10: `ALTER TABLE activity_tasks ADD COLUMN queue TEXT NOT NULL DEFAULT '';
		ALTER TABLE activity_tasks ADD COLUMN heartbeat_timeout_ms INTEGER NOT NULL DEFAULT 0;
		ALTER TABLE activity_tasks ADD COLUMN heartbeat BLOB;
		DROP INDEX activity_tasks_fair;
		DROP INDEX activity_tasks_instance;` + indexes11,
	// Version 12: host-driven retries of activities: each task's retry
	// policy (JSON; NULL, as for the tasks already there: none), the
	// attempts of it that failed and the last failure, and when the task
	// may run again (0: at once).
	11: retryColumns,
	// Version 13: schedules, and the runs they started.
	12: schedulesTables,
	// Version 14: the secret of the completion token of a task whose
	// attempt waits to be completed from outside (AwaitCompletion).
	13: `ALTER TABLE activity_tasks ADD COLUMN pending_token TEXT;`,
	// Version 15: what each instance waits on, as its last turn left it
	// (store.TurnCommit.WaitingOn and Waits); none, for the instances
	// already there, until their next turn.
	14: waitColumns,
	// Version 16: the search attributes orchestrations set
	// (ctx.SetAttributes), indexed for list filters.
	15: attributesTable,
	// Version 17: each start's rank in the fair order of starts, and the
	// parent of a child's start (see sqlstore.Tx.InsertInstance); the
	// starts already there share rank 0, and so are taken in the order
	// they came.
	16: `ALTER TABLE messages ADD COLUMN fair_rank INTEGER NOT NULL DEFAULT 0;
		ALTER TABLE messages ADD COLUMN parent_id TEXT;` + indexes17,
	// Version 18: the audit log, a row for each change asked through the
	// API.
	17: auditTable,
	// Version 19: batches, actions on every instance a filter selected
	// (durabox batch), with the ids of those instances.
	18: batchesTables,
}

// batchesTables are the batches (store.Batches), which version 19 adds:
// one row a batch, with the runner that holds it (owner, empty for none)
// until lease_until (nanoseconds), and one row each of its instances,
// with what the batch did with it (empty until it took it). Times are
// nanoseconds.
const batchesTables = `CREATE TABLE batches (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	action        TEXT NOT NULL,
	args          BLOB NOT NULL,
	filter        TEXT NOT NULL,
	by_token      TEXT NOT NULL,
	rate          REAL NOT NULL,
	state         TEXT NOT NULL,
	matched       INTEGER NOT NULL,
	done          INTEGER NOT NULL,
	failed        INTEGER NOT NULL,
	skipped       INTEGER NOT NULL,
	last_instance TEXT NOT NULL,
	last_error    TEXT NOT NULL,
	owner         TEXT NOT NULL,
	lease_until   INTEGER NOT NULL,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);
CREATE INDEX batches_state ON batches(state);
CREATE TABLE batch_items (
	batch_id    INTEGER NOT NULL,
	instance_id TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	detail      TEXT NOT NULL,
	PRIMARY KEY (batch_id, instance_id)
) WITHOUT ROWID;`

// auditTable is the audit log (store.Audit), which version 18 adds: one
// row a change asked through the API, or refused. Times are nanoseconds.
const auditTable = `CREATE TABLE audit_log (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	at      INTEGER NOT NULL,
	token   TEXT NOT NULL,
	role    TEXT NOT NULL,
	action  TEXT NOT NULL,
	target  TEXT NOT NULL,
	status  INTEGER NOT NULL,
	outcome TEXT NOT NULL,
	detail  TEXT NOT NULL
);
CREATE INDEX audit_log_at ON audit_log(at);`

// waitColumns are the columns of what an instance waits on, which version
// 15 adds: the kinds between commas (sqlstore.WaitingOn), and the waits
// kept (JSON; NULL or null for none).
const waitColumns = `ALTER TABLE instances ADD COLUMN waiting_on TEXT NOT NULL DEFAULT '';
	ALTER TABLE instances ADD COLUMN waits BLOB;`

// attributesTable holds the search attributes of instances, which version
// 16 adds: one row an attribute, one an element of a keyword list. A
// string or keyword is in str; an int or a float in num (as a float, for
// comparisons); an int exactly, a bool (0, 1) and a time (Unix
// nanoseconds) in ival. Each index leads with the name and ends with the
// instance, so that a filter on one attribute reads a range of one index
// and nothing else (store/internal/sqlstore's filter.go).
const attributesTable = `CREATE TABLE instance_attributes (
	instance_id TEXT NOT NULL,
	name        TEXT NOT NULL,
	type        TEXT NOT NULL,
	str         TEXT,
	num         REAL,
	ival        INTEGER
);
CREATE INDEX instance_attributes_instance ON instance_attributes(instance_id, name);
CREATE INDEX instance_attributes_str ON instance_attributes(name, str, instance_id);
CREATE INDEX instance_attributes_num ON instance_attributes(name, num, instance_id);
CREATE INDEX instance_attributes_ival ON instance_attributes(name, ival, instance_id);
`

// retryColumns are the columns of activity tasks' retries, which version
// 12 adds, and the index NextVisibleAt reads.
const retryColumns = `ALTER TABLE activity_tasks ADD COLUMN retry TEXT;
	ALTER TABLE activity_tasks ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE activity_tasks ADD COLUMN last_failure TEXT;
	ALTER TABLE activity_tasks ADD COLUMN visible_at INTEGER NOT NULL DEFAULT 0;
	CREATE INDEX activity_tasks_visible ON activity_tasks(visible_at);`

// schedulesTables are the tables of schedules, which version 13 adds: one
// row a schedule, and one a slot it decided (the last
// store.MaxScheduleRuns of each). Times and durations are nanoseconds;
// buffered is 0 when no slot is held back.
const schedulesTables = `CREATE TABLE schedules (
	name          TEXT PRIMARY KEY,
	cron          TEXT NOT NULL,
	every_ns      INTEGER NOT NULL,
	timezone      TEXT NOT NULL,
	jitter_ns     INTEGER NOT NULL,
	orchestration TEXT NOT NULL,
	module_hash   TEXT NOT NULL,
	input         BLOB,
	overlap       TEXT NOT NULL,
	catchup_ns    INTEGER NOT NULL,
	paused        INTEGER NOT NULL,
	note          TEXT NOT NULL,
	next_slot     INTEGER NOT NULL,
	buffered      INTEGER NOT NULL,
	last_instance TEXT NOT NULL,
	started       INTEGER NOT NULL,
	skipped       INTEGER NOT NULL,
	missed        INTEGER NOT NULL,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE schedule_runs (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	schedule    TEXT NOT NULL,
	slot        INTEGER NOT NULL,
	fired_at    INTEGER NOT NULL,
	outcome     TEXT NOT NULL,
	instance_id TEXT NOT NULL,
	manual      INTEGER NOT NULL,
	error       TEXT NOT NULL
);
CREATE INDEX schedule_runs_schedule ON schedule_runs(schedule, id);`

// updatesTable is the table of updates, which version 10 adds: one row an
// update a client sent an instance, by the id that makes it unique there.
const updatesTable = `CREATE TABLE updates (
	instance_id  TEXT NOT NULL,
	update_id    TEXT NOT NULL,
	name         TEXT NOT NULL,
	input        BLOB,
	state        TEXT NOT NULL,
	result       BLOB,
	failure      TEXT,
	requested_at INTEGER NOT NULL,
	answered_at  INTEGER,
	PRIMARY KEY (instance_id, update_id)
) WITHOUT ROWID;`

// continuedExecutions is the table of when each execution that continued
// as new ended, which version 6 adds.
const continuedExecutions = `CREATE TABLE continued_executions (
	instance_id  TEXT NOT NULL,
	execution_id INTEGER NOT NULL,
	ended_at     INTEGER NOT NULL,
	PRIMARY KEY (instance_id, execution_id)
) WITHOUT ROWID;`

// indexes6 are the indexes version 6 adds. None is partial: a partial
// index whose condition names a column a turn's commit sets (status) made
// every commit twice as slow (BenchmarkTurn_1k, 1.1 to 2.6 ms).
const indexes6 = `
CREATE INDEX continued_executions_ended ON continued_executions(ended_at);
CREATE INDEX instances_status ON instances(status, created_at);
CREATE INDEX instances_name ON instances(name, created_at);
CREATE INDEX instances_module ON instances(module_hash, status);
CREATE INDEX instances_parent ON instances(parent_id, created_at);
CREATE INDEX instances_finished ON instances(status, updated_at);
`

// indexes7 are the indexes of the fair order of activity tasks, which
// version 7 adds.
const indexes7 = `
CREATE INDEX activity_tasks_fair ON activity_tasks(fair_rank, id);
CREATE INDEX activity_tasks_instance ON activity_tasks(instance_id, fair_rank);
`

// indexes11 are the indexes of the fair order of activity tasks per task
// queue, which version 11 makes of indexes7.
const indexes11 = `
CREATE INDEX activity_tasks_fair ON activity_tasks(queue, fair_rank, id);
CREATE INDEX activity_tasks_instance ON activity_tasks(instance_id, queue, fair_rank);
`

// indexes17 are the indexes of the fair order of starts, which version
// 17 adds: the starts waiting, by rank, and each parent's children's
// starts waiting, by rank. Both are partial (a message's visible_at and
// parent_id never change), so other messages do not pay for them.
const indexes17 = `
CREATE INDEX messages_start ON messages(fair_rank, id) WHERE visible_at = 1;
CREATE INDEX messages_parent ON messages(parent_id, fair_rank) WHERE parent_id IS NOT NULL;
`

const schema = `
CREATE TABLE modules (
	hash           TEXT PRIMARY KEY,
	wasm           BLOB NOT NULL,
	orchestrations TEXT NOT NULL,
	activities     TEXT NOT NULL,
	env            TEXT NOT NULL DEFAULT '[]',
	deployed_at    INTEGER NOT NULL,
	seq            INTEGER NOT NULL
);
CREATE TABLE orchestration_modules (
	name TEXT PRIMARY KEY,
	hash TEXT NOT NULL REFERENCES modules(hash)
);
CREATE TABLE instances (
	id            TEXT PRIMARY KEY,
	name          TEXT NOT NULL,
	module_hash   TEXT NOT NULL REFERENCES modules(hash),
	execution_id  INTEGER NOT NULL,
	status        TEXT NOT NULL,
	input         BLOB,
	result        BLOB,
	failure       TEXT,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	last_event_id INTEGER NOT NULL DEFAULT 0,
	parent_id          TEXT,
	parent_schedule_id INTEGER,
	custom_status      TEXT NOT NULL DEFAULT '',
	attempt            INTEGER NOT NULL DEFAULT 0,
	persistent_taken   INTEGER NOT NULL DEFAULT 0,
	counted_run        INTEGER NOT NULL DEFAULT 0,
	waiting_on         TEXT NOT NULL DEFAULT '',
	waits              BLOB
);
CREATE INDEX instances_created ON instances(created_at);
CREATE TABLE history (
	instance_id  TEXT NOT NULL,
	execution_id INTEGER NOT NULL,
	event_id     INTEGER NOT NULL,
	payload      BLOB NOT NULL,
	PRIMARY KEY (instance_id, execution_id, event_id)
) WITHOUT ROWID;
` + continuedExecutions + `
CREATE TABLE messages (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	instance_id TEXT NOT NULL,
	payload     BLOB NOT NULL,
	visible_at  INTEGER NOT NULL,
	enqueued_at INTEGER NOT NULL DEFAULT 0,
	fair_rank   INTEGER NOT NULL DEFAULT 0,
	parent_id   TEXT
);
CREATE INDEX messages_visible ON messages(visible_at, id);
CREATE INDEX messages_instance ON messages(instance_id, id);
CREATE TABLE activity_tasks (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	instance_id  TEXT NOT NULL,
	execution_id INTEGER NOT NULL,
	module_hash  TEXT NOT NULL,
	schedule_id  INTEGER NOT NULL,
	name         TEXT NOT NULL,
	input        BLOB,
	attempt      INTEGER NOT NULL DEFAULT 0,
	enqueued_at  INTEGER NOT NULL DEFAULT 0,
	fair_rank    INTEGER NOT NULL DEFAULT 0,
	timeout_ms   INTEGER NOT NULL DEFAULT 0,
	counted_run  INTEGER NOT NULL DEFAULT 0,
	queue        TEXT NOT NULL DEFAULT '',
	heartbeat_timeout_ms INTEGER NOT NULL DEFAULT 0,
	heartbeat    BLOB,
	retry        TEXT,
	failures     INTEGER NOT NULL DEFAULT 0,
	last_failure TEXT,
	visible_at   INTEGER NOT NULL DEFAULT 0,
	pending_token TEXT
);
CREATE INDEX activity_tasks_visible ON activity_tasks(visible_at);
` + indexes6 + indexes11 + indexes17 + updatesTable + schedulesTables + attributesTable + auditTable + batchesTables

// sqliteHeader begins every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// checkHeader refuses an existing, non-empty file that is not SQLite,
// before the driver can touch it.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return nil // empty: a new database
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("sqlite: read %s: %w", path, err)
	case !bytes.Equal(head[:n], sqliteHeader):
		return fmt.Errorf("sqlite: %s is not a SQLite database (its header is wrong); refusing to open it, and it was left as it was", path)
	}
	return nil
}

// prepareSchema creates the schema in a new database, brings an older one
// up to date, and refuses a file that is not a Durabox database, comes
// from a newer Durabox, or (with OpenCheckQuick) fails SQLite's
// quick_check. It writes nothing before it has decided.
func (s *Store) prepareSchema(path string) error {
	var appID, version, tables int
	err := s.db.QueryRow(`PRAGMA application_id`).Scan(&appID)
	if err == nil {
		err = s.db.QueryRow(`PRAGMA user_version`).Scan(&version)
	}
	if err == nil {
		err = s.db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&tables)
	}
	if err != nil {
		return fmt.Errorf("sqlite: read %s: %w (is it a corrupt database?)", path, err)
	}
	fresh := tables == 0 && appID == 0
	switch {
	case fresh:
	case appID != applicationID:
		return fmt.Errorf("sqlite: %s is a SQLite database but not a Durabox one; refusing to open it, and it was left as it was", path)
	case version > schemaVersion:
		return fmt.Errorf("sqlite: %s has schema version %d, newer than this durabox understands (%d); upgrade durabox to open it", path, version, schemaVersion)
	case s.opts.OpenCheck == OpenCheckQuick:
		if err := s.quickCheck(path); err != nil {
			return err
		}
	}
	if err := s.useWAL(path); err != nil {
		return err
	}
	if fresh {
		if err := s.inTx(schema + fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d;", applicationID, schemaVersion)); err != nil {
			return fmt.Errorf("sqlite: create schema in %s: %w", path, err)
		}
		return nil
	}
	for v := version; v < schemaVersion; v++ {
		if err := s.inTx(migrations[v] + fmt.Sprintf("PRAGMA user_version = %d;", v+1)); err != nil {
			return fmt.Errorf("sqlite: migrate %s from schema version %d to %d: %w", path, v, v+1, err)
		}
		s.opts.Logger.Info("database migrated", "db", path, "from", v, "to", v+1)
	}
	return nil
}

// useWAL puts the database in WAL mode, which it keeps.
func (s *Store) useWAL(path string) error {
	var mode string
	if err := s.db.QueryRow(`PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: %s: WAL mode: %w", path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("sqlite: %s: WAL mode: the journal mode stayed %s", path, mode)
	}
	return nil
}

// inTx runs statements in one transaction.
func (s *Store) inTx(statements string) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(statements); err != nil {
		return err
	}
	return tx.Commit()
}

// SchemaVersion is the schema version this store writes: Open migrates a
// database of an older one, and refuses one of a newer.
const SchemaVersion = schemaVersion
