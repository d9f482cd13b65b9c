package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/store/internal/sqlstore"
)

// application marks a schema as a Durabox database, in durabox_meta.
const application = "durabox"

// schemaVersion is the version of the schema below. Raise it with a
// migration in migrations when the schema changes.
const schemaVersion = 14

// migrations[v] brings a database from version v to v+1.
var migrations = map[int]string{
	// Version 2: each activity task's rank in the fair order of the queue
	// (see writeTx.QueueActivities); the tasks already there share rank 0, and so
	// are taken in the order they came.
	1: `ALTER TABLE activity_tasks ADD COLUMN fair_rank bigint NOT NULL DEFAULT 0;` + indexes2,
	// Version 3: the deadline of each attempt an orchestration set for
	// its activity call (durabox.WithTimeout), in milliseconds; 0, as for
	// the tasks already there, leaves it to the host.
	2: `ALTER TABLE activity_tasks ADD COLUMN timeout_ms bigint NOT NULL DEFAULT 0;`,
	// Version 4: the updates clients send instances, and their answers.
	3: updatesTable,
	// Version 5: each activity task's task queue ('' for the hosts' own,
	// as for the tasks already there), its heartbeat timeout and the
	// details of its last heartbeat; the fair order is kept per queue.
	4: `ALTER TABLE activity_tasks ADD COLUMN queue text COLLATE "C" NOT NULL DEFAULT '';
		ALTER TABLE activity_tasks ADD COLUMN heartbeat_timeout_ms bigint NOT NULL DEFAULT 0;
		ALTER TABLE activity_tasks ADD COLUMN heartbeat bytea;
		DROP INDEX activity_tasks_fair;
		DROP INDEX activity_tasks_instance_rank;` + indexes5,
	// Version 6: host-driven retries of activities: each task's retry
	// policy (JSON; NULL, as for the tasks already there: none), the
	// attempts of it that failed and the last failure, and when the task
	// may run again (0: at once).
	5: retryColumns,
	// Version 7: schedules, and the runs they started.
	6: schedulesTables,
	// Version 8: the secret of the completion token of a task whose
	// attempt waits to be completed from outside (AwaitCompletion).
	7: `ALTER TABLE activity_tasks ADD COLUMN pending_token text;`,
	// Version 9: what each instance waits on, as its last turn left it
	// (store.TurnCommit.WaitingOn and Waits); none, for the instances
	// already there, until their next turn.
	8: waitColumns,
	// Version 10: the search attributes orchestrations set
	// (ctx.SetAttributes), indexed for list filters.
	9: attributesTable,
	// Version 11: each start's rank in the fair order of starts, and the
	// parent of a child's start (see sqlstore.Tx.InsertInstance); the
	// starts already there share rank 0, and so are taken in the order
	// they came.
	10: `ALTER TABLE messages ADD COLUMN fair_rank bigint NOT NULL DEFAULT 0;
		ALTER TABLE messages ADD COLUMN parent_id text COLLATE "C";` + indexes11,
	// Version 12: the audit log, a row for each change asked through the
	// API.
	11: auditTable,
	// Version 13: batches, actions on every instance a filter selected
	// (durabox batch), with the ids of those instances.
	12: batchesTables,
	// Version 14: when each instance finished (finished_at), indexed
	// in place of (status, updated_at), so that a turn of a running
	// instance, which changes its updated_at, changes no indexed column
	// and its update of the row can be HOT; finished_at is generated,
	// so the instances already there have theirs.
	13: `ALTER TABLE instances ADD COLUMN ` + finishedAt + `;
		DROP INDEX instances_finished;` + indexes14,
}

// finishedAt is the column of when an instance finished, which version 14
// adds: its updated_at once it has (sqlstore.Finished), NULL while it has
// not. PostgreSQL keeps it as the row changes.
var finishedAt = `finished_at bigint GENERATED ALWAYS AS (CASE WHEN ` + sqlstore.Finished + ` THEN updated_at END) STORED`

// indexes14 is the index of the finished instances by when they
// finished, which version 14 adds: retention's sweeps and the filters of
// the instances finished before a time (sqlstore.Dialect.FinishedAt)
// read it. It is partial: a running instance has no entry in it.
const indexes14 = `
CREATE INDEX instances_finished_at ON instances(finished_at) WHERE finished_at IS NOT NULL;
`

// batchesTables are the batches (store.Batches), which version 13 adds,
// as store/sqlite's: one row a batch, with the host that holds it (owner,
// empty for none) until lease_until (nanoseconds), and one row each of its
// instances, with what the batch did with it (empty until it took it).
const batchesTables = `CREATE TABLE batches (
	id            bigserial PRIMARY KEY,
	action        text NOT NULL,
	args          bytea NOT NULL,
	filter        text NOT NULL,
	by_token      text NOT NULL,
	rate          double precision NOT NULL,
	state         text NOT NULL,
	matched       bigint NOT NULL,
	done          bigint NOT NULL,
	failed        bigint NOT NULL,
	skipped       bigint NOT NULL,
	last_instance text COLLATE "C" NOT NULL,
	last_error    text NOT NULL,
	owner         text NOT NULL,
	lease_until   bigint NOT NULL,
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL
);
CREATE INDEX batches_state ON batches(state);
CREATE TABLE batch_items (
	batch_id    bigint NOT NULL,
	instance_id text COLLATE "C" NOT NULL,
	outcome     text NOT NULL,
	detail      text NOT NULL,
	PRIMARY KEY (batch_id, instance_id)
);`

// auditTable is the audit log (store.Audit), which version 12 adds: one
// row a change asked through the API, or refused. Times are nanoseconds.
const auditTable = `CREATE TABLE audit_log (
	id      bigserial PRIMARY KEY,
	at      bigint NOT NULL,
	token   text COLLATE "C" NOT NULL,
	role    text NOT NULL,
	action  text NOT NULL,
	target  text COLLATE "C" NOT NULL,
	status  integer NOT NULL,
	outcome text NOT NULL,
	detail  text NOT NULL
);
CREATE INDEX audit_log_at ON audit_log(at);`

// waitColumns are the columns of what an instance waits on, which version
// 9 adds: the kinds between commas (sqlstore.WaitingOn), and the waits
// kept (JSON; NULL or null for none).
const waitColumns = `ALTER TABLE instances ADD COLUMN waiting_on text COLLATE "C" NOT NULL DEFAULT '';
	ALTER TABLE instances ADD COLUMN waits bytea;`

// attributesTable holds the search attributes of instances, which version
// 10 adds, as store/sqlite's does: one row an attribute, one an element of
// a keyword list; a string or keyword in str, an int or a float in num
// (for comparisons), an int exactly, a bool (0, 1) and a time (Unix
// nanoseconds) in ival.
const attributesTable = `CREATE TABLE instance_attributes (
	instance_id text COLLATE "C" NOT NULL,
	name        text COLLATE "C" NOT NULL,
	type        text NOT NULL,
	str         text COLLATE "C",
	num         double precision,
	ival        bigint
);
CREATE INDEX instance_attributes_instance ON instance_attributes(instance_id, name);
CREATE INDEX instance_attributes_str ON instance_attributes(name, str, instance_id);
CREATE INDEX instance_attributes_num ON instance_attributes(name, num, instance_id);
CREATE INDEX instance_attributes_ival ON instance_attributes(name, ival, instance_id);
`

// retryColumns are the columns of activity tasks' retries, which version
// 6 adds, and the index NextVisibleAt reads.
const retryColumns = `ALTER TABLE activity_tasks ADD COLUMN retry text;
	ALTER TABLE activity_tasks ADD COLUMN failures integer NOT NULL DEFAULT 0;
	ALTER TABLE activity_tasks ADD COLUMN last_failure text;
	ALTER TABLE activity_tasks ADD COLUMN visible_at bigint NOT NULL DEFAULT 0;
	CREATE INDEX activity_tasks_visible ON activity_tasks(visible_at);`

// schedulesTables are the tables of schedules, which version 7 adds: one
// row a schedule, and one a slot it decided (the last
// store.MaxScheduleRuns of each). Times and durations are nanoseconds;
// buffered is 0 when no slot is held back.
const schedulesTables = `CREATE TABLE schedules (
	name          text COLLATE "C" PRIMARY KEY,
	cron          text NOT NULL,
	every_ns      bigint NOT NULL,
	timezone      text NOT NULL,
	jitter_ns     bigint NOT NULL,
	orchestration text NOT NULL,
	module_hash   text NOT NULL,
	input         bytea,
	overlap       text NOT NULL,
	catchup_ns    bigint NOT NULL,
	paused        boolean NOT NULL,
	note          text NOT NULL,
	next_slot     bigint NOT NULL,
	buffered      bigint NOT NULL,
	last_instance text NOT NULL,
	started       bigint NOT NULL,
	skipped       bigint NOT NULL,
	missed        bigint NOT NULL,
	created_at    bigint NOT NULL,
	updated_at    bigint NOT NULL
);
CREATE TABLE schedule_runs (
	id          bigserial PRIMARY KEY,
	schedule    text COLLATE "C" NOT NULL,
	slot        bigint NOT NULL,
	fired_at    bigint NOT NULL,
	outcome     text NOT NULL,
	instance_id text NOT NULL,
	manual      boolean NOT NULL,
	error       text NOT NULL
);
CREATE INDEX schedule_runs_schedule ON schedule_runs(schedule, id);`

// updatesTable is the table of updates, which version 4 adds: one row an
// update a client sent an instance, by the id that makes it unique there.
const updatesTable = `CREATE TABLE updates (
	instance_id  text COLLATE "C" NOT NULL,
	update_id    text COLLATE "C" NOT NULL,
	name         text NOT NULL,
	input        bytea,
	state        text NOT NULL,
	result       bytea,
	failure      text,
	requested_at bigint NOT NULL,
	answered_at  bigint,
	PRIMARY KEY (instance_id, update_id)
);`

// indexes2 are the indexes of the fair order of activity tasks, which
// version 2 adds.
const indexes2 = `
CREATE INDEX activity_tasks_fair ON activity_tasks(fair_rank, id);
CREATE INDEX activity_tasks_instance_rank ON activity_tasks(instance_id, fair_rank);
`

// indexes5 are the indexes of the fair order of activity tasks per task
// queue, which version 5 makes of indexes2.
const indexes5 = `
CREATE INDEX activity_tasks_fair ON activity_tasks(queue, fair_rank, id);
CREATE INDEX activity_tasks_instance_rank ON activity_tasks(instance_id, queue, fair_rank);
`

// indexes11 are the indexes of the fair order of starts, which version
// 11 adds: the starts waiting, by rank, and each parent's children's starts
// waiting, by rank. Both are partial (a message's visible_at and
// parent_id never change), so other messages do not pay for them.
const indexes11 = `
CREATE INDEX messages_start ON messages(fair_rank, id) WHERE visible_at = 1;
CREATE INDEX messages_parent ON messages(parent_id, fair_rank) WHERE parent_id IS NOT NULL;
`

// The schema. Times are Unix nanoseconds (bigint), as in store/sqlite, so
// that nothing is rounded to PostgreSQL's microseconds. Payloads are the
// JSON of engine events as bytes (bytea, not jsonb, which would rewrite the
// bytes an orchestration reads). Texts that are compared or sorted use the
// "C" collation: byte order, whatever the database's locale.
var schema = `
CREATE TABLE durabox_meta (
	key   text PRIMARY KEY,
	value text NOT NULL
);
CREATE SEQUENCE module_seq;
CREATE TABLE modules (
	hash           text COLLATE "C" PRIMARY KEY,
	wasm           bytea NOT NULL,
	orchestrations text NOT NULL,
	activities     text NOT NULL,
	env            text NOT NULL DEFAULT '[]',
	deployed_at    bigint NOT NULL,
	seq            bigint NOT NULL
);
CREATE TABLE orchestration_modules (
	name text COLLATE "C" PRIMARY KEY,
	hash text COLLATE "C" NOT NULL REFERENCES modules(hash)
);
CREATE TABLE instances (
	id                 text COLLATE "C" PRIMARY KEY,
	seq                bigserial NOT NULL,
	name               text COLLATE "C" NOT NULL,
	module_hash        text COLLATE "C" NOT NULL REFERENCES modules(hash),
	execution_id       bigint NOT NULL,
	status             text COLLATE "C" NOT NULL,
	input              bytea,
	result             bytea,
	failure            text,
	created_at         bigint NOT NULL,
	updated_at         bigint NOT NULL,
	last_event_id      bigint NOT NULL DEFAULT 0,
	lock_token         text,
	lock_owner         text,
	locked_until       bigint NOT NULL DEFAULT 0,
	parent_id          text COLLATE "C",
	parent_schedule_id bigint,
	custom_status      text NOT NULL DEFAULT '',
	attempt            integer NOT NULL DEFAULT 0,
	persistent_taken   integer NOT NULL DEFAULT 0,
	waiting_on         text COLLATE "C" NOT NULL DEFAULT '',
	waits              bytea,
	` + finishedAt + `
);
CREATE INDEX instances_created ON instances(created_at, seq);
CREATE INDEX instances_locked ON instances(locked_until);
CREATE INDEX instances_status ON instances(status, created_at);
CREATE INDEX instances_name ON instances(name, created_at);
CREATE INDEX instances_module ON instances(module_hash, status);
CREATE INDEX instances_parent ON instances(parent_id, created_at);
` + indexes14 + `CREATE TABLE history (
	instance_id  text COLLATE "C" NOT NULL,
	execution_id bigint NOT NULL,
	event_id     bigint NOT NULL,
	kind         text NOT NULL,
	payload      bytea NOT NULL,
	PRIMARY KEY (instance_id, execution_id, event_id)
);
CREATE TABLE continued_executions (
	instance_id  text COLLATE "C" NOT NULL,
	execution_id bigint NOT NULL,
	ended_at     bigint NOT NULL,
	PRIMARY KEY (instance_id, execution_id)
);
CREATE INDEX continued_executions_ended ON continued_executions(ended_at);
CREATE TABLE messages (
	id          bigserial PRIMARY KEY,
	instance_id text COLLATE "C" NOT NULL,
	kind        text NOT NULL,
	payload     bytea NOT NULL,
	visible_at  bigint NOT NULL,
	enqueued_at bigint NOT NULL,
	fair_rank   bigint NOT NULL DEFAULT 0,
	parent_id   text COLLATE "C"
);
CREATE INDEX messages_visible ON messages(visible_at, id);
CREATE INDEX messages_instance ON messages(instance_id, id);
CREATE TABLE activity_tasks (
	id           bigserial PRIMARY KEY,
	instance_id  text COLLATE "C" NOT NULL,
	execution_id bigint NOT NULL,
	module_hash  text COLLATE "C" NOT NULL,
	schedule_id  bigint NOT NULL,
	name         text NOT NULL,
	input        bytea,
	attempt      integer NOT NULL DEFAULT 0,
	lock_token   text,
	lock_owner   text,
	locked_until bigint NOT NULL DEFAULT 0,
	enqueued_at  bigint NOT NULL,
	fair_rank    bigint NOT NULL DEFAULT 0,
	timeout_ms   bigint NOT NULL DEFAULT 0,
	queue        text COLLATE "C" NOT NULL DEFAULT '',
	heartbeat_timeout_ms bigint NOT NULL DEFAULT 0,
	heartbeat    bytea,
	retry        text,
	failures     integer NOT NULL DEFAULT 0,
	last_failure text,
	visible_at   bigint NOT NULL DEFAULT 0,
	pending_token text
);
CREATE INDEX activity_tasks_visible ON activity_tasks(visible_at);
CREATE INDEX activity_tasks_locked ON activity_tasks(locked_until, id);
CREATE INDEX activity_tasks_instance ON activity_tasks(instance_id);
` + indexes5 + indexes11 + updatesTable + schedulesTables + attributesTable + auditTable + batchesTables

// prepareSchemaLock is the advisory lock hosts take while they prepare the
// schema, so that two starting at once do not both create it.
const prepareSchemaLock = 0x44425831

// schemaState is what the database schema a URL names holds, as
// prepareSchema and Check read it.
type schemaState struct {
	// where is the schema's name; tables, how many tables it holds.
	where  string
	tables int
	// version is its Durabox schema version; foreign says it holds tables
	// but is not a Durabox database.
	version int
	foreign bool
	// server is the server's version, as server_version_num and as it
	// names itself.
	server     int
	serverName string
}

// minServer is the oldest PostgreSQL (server_version_num) the schema
// runs on: 12, for the generated column instances.finished_at.
const minServer = 120000

// readSchema reads what the current database schema holds.
func readSchema(ctx context.Context, tx pgx.Tx) (schemaState, error) {
	var st schemaState
	var meta bool
	err := tx.QueryRow(ctx, `SELECT current_schema(),
		(SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()),
		EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'durabox_meta'),
		current_setting('server_version_num')::int, current_setting('server_version')`).Scan(&st.where, &st.tables, &meta, &st.server, &st.serverName)
	if err != nil {
		return st, fmt.Errorf("postgres: read the schema: %w", err)
	}
	if st.tables == 0 {
		return st, nil
	}
	if !meta {
		st.foreign = true
		return st, nil
	}
	var app, v string
	err = tx.QueryRow(ctx, `SELECT
		coalesce((SELECT value FROM durabox_meta WHERE key = 'application'), ''),
		coalesce((SELECT value FROM durabox_meta WHERE key = 'schema_version'), '')`).Scan(&app, &v)
	if err != nil {
		return st, fmt.Errorf("postgres: read durabox_meta: %w", err)
	}
	version, verr := strconv.Atoi(v)
	st.version, st.foreign = version, app != application || verr != nil
	return st, nil
}

// refusal is the error of a schema this durabox must not use: one on a
// server older than minServer, another application's, or a newer
// Durabox's; nil for others.
func (st schemaState) refusal() error {
	switch {
	case st.server < minServer:
		return fmt.Errorf("postgres: the server is PostgreSQL %s; Durabox needs PostgreSQL 12 or later (its schema has a generated column): upgrade the server, or serve on SQLite", st.serverName)
	case st.foreign:
		return fmt.Errorf("postgres: schema %s of the database holds %d tables but is not a Durabox database; "+
			"refusing to use it, and it was left as it was (name an empty database or schema)", st.where, st.tables)
	case st.version > schemaVersion:
		return fmt.Errorf("postgres: schema %s has Durabox schema version %d, newer than this durabox understands (%d); upgrade durabox to use it", st.where, st.version, schemaVersion)
	}
	return nil
}

// prepareSchema creates the schema in an empty database schema, brings an
// older one up to date, and refuses a schema that holds tables but is not
// a Durabox database, or comes from a newer Durabox. It writes nothing
// before it has decided. It runs in one transaction, under an advisory
// lock.
func (s *Store) prepareSchema(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, prepareSchemaLock); err != nil {
			return fmt.Errorf("postgres: lock the schema: %w", err)
		}
		st, err := readSchema(ctx, tx)
		if err != nil {
			return err
		}
		where := st.where
		s.where = where
		if err := st.refusal(); err != nil {
			return err
		}
		if st.tables == 0 {
			if _, err := tx.Exec(ctx, schema); err != nil {
				return fmt.Errorf("postgres: create the schema in %s: %w", where, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO durabox_meta (key, value) VALUES ('application', $1), ('schema_version', $2)`,
				application, strconv.Itoa(schemaVersion))
			return err
		}
		version := st.version
		for ; version < schemaVersion; version++ {
			if _, err := tx.Exec(ctx, migrations[version]); err != nil {
				return fmt.Errorf("postgres: migrate schema %s from version %d to %d: %w", where, version, version+1, err)
			}
			if _, err := tx.Exec(ctx, `UPDATE durabox_meta SET value = $1 WHERE key = 'schema_version'`, strconv.Itoa(version+1)); err != nil {
				return err
			}
			s.opts.Logger.Info("database migrated", "schema", where, "from", version, "to", version+1)
		}
		return nil
	})
}

// SchemaVersion is the schema version this store writes: Open migrates a
// database of an older one, and refuses one of a newer.
const SchemaVersion = schemaVersion
