// Package sqlite is the default Durabox store: one SQLite file in WAL mode,
// with every turn committed in one transaction.
//
// The file belongs to one host at a time: Open takes an exclusive lock on a
// file beside it (FILE.lock, holding the holder's pid) and a second Open
// fails, naming the process that holds it (the holder writes its pid just
// after it takes the lock; a second Open waits up to two seconds for it). A new database, its -wal and
// -shm files and the lock file are readable by their owner only (0600):
// the database holds the environments deployed with the modules. The database identifies itself
// with an application id and records its schema version; Open refuses files
// that are not SQLite, SQLite files that are not Durabox databases, and
// databases from a newer Durabox, without modifying them, and brings
// databases from an older Durabox up to date. It refuses a damaged file
// too, before it writes anything: a file shorter than its header says, a
// WAL cut short or damaged (SQLite would drop what follows the damage
// silently; check.go, wal.go), and, unless Options.OpenCheck says
// OpenCheckHeader, pages that fail SQLite's quick_check. Check reads a
// file the way durabox check-db reports it: those, integrity_check,
// foreign_key_check and the store's invariants. Backup copies a file a
// host is serving, consistently, with SQLite's online backup; Restore puts
// a copy in place of a file no host holds. A write that the disk refuses
// for want of space fails with store.ErrFull, and Ping fails with it until
// there is space again (full.go); one the disk fails (EIO writing or
// syncing) fails with store.ErrDiskFailed, and Ping fails with it until a
// write succeeds again (diskfailed.go).
//
// The schema:
//
//   - modules: deployed modules (the wasm bytes and what they register);
//     orchestration_modules maps each orchestration name to the module
//     deployed last that registers it.
//   - instances: one row per instance, with its current execution, status,
//     the deliveries of its turn since its last commit (attempt, the next
//     one counted in advance by the store's run named in counted_run; see
//     locks.go) and the persistent events its execution took
//     (persistent_taken). Indexes by status (with the creation time, and
//     with the last update: for the finished, when they finished),
//     orchestration, module and parent serve the filters of
//     ListInstances, CountInstances and PurgeInstances.
//   - history: one JSON engine.Event per row, keyed by instance, execution
//     and event id.
//   - continued_executions: when each execution that continued as new
//     ended, for DeleteExecutions.
//   - messages: JSON engine.Events waiting for an instance, visible from
//     visible_at, stored at enqueued_at. A message visible at once has
//     visible_at 0, or 1 when it starts a new instance (a child's start
//     among them), which also has its rank in the fair order of starts
//     (fair_rank) and, for a child's, its parent (parent_id; see
//     sqlstore.Dialect.InsertStart); a timer is a TimerFired message
//     visible when it is due.
//   - activity_tasks: activities waiting for a worker, with the number of
//     deliveries (attempt and counted_run, as for instances), when they
//     were stored (enqueued_at), their rank in the fair order workers
//     take them in (fair_rank; see writeTx.QueueActivities), and their
//     retries: the call's policy (retry, JSON), the attempts that failed
//     (failures, last_failure) and when the task may run again
//     (visible_at; 0: at once).
//
// Every connection has SQLite's query planner stability guarantee on, so
// that the statements go-sqlite3 caches are not prepared again on every
// use (qpsg.go), and keeps the statements that begin and end transactions
// and savepoints prepared; the write connection keeps its statement
// journal in memory (driver.go).
//
// # What the store keeps in memory between commits
//
// The file has one host, so some of the store's state lives in the
// store's memory and not in the file. A crash loses all of it, and loses
// nothing a caller was told is committed; a store opened again starts as
// ReleaseAllLeases leaves one:
//
//   - Instance locks (locks.go): which instances turns hold, with each
//     lock's token and when it expires, and which instances have had the
//     delivery their last commit counted in advance (attempt and
//     counted_run in the file) handed out in this run. Taking work reads
//     beside the writer and writes nothing, unless a delivery must be
//     counted that no commit counted in advance. Lost in a crash: every
//     instance is free again, and its next delivery is counted.
//   - Activity leases (locks.go): the same for activity tasks, which
//     workers hold under leases, and for each queue a floor in the fair
//     order below which every task is held, for fetches to read from
//     (floor.go). Lost in a crash: every task is free again, and its next
//     delivery is counted.
//   - Activity results (results.go): CompleteActivity keeps a result (up
//     to 64 KiB, 64 MiB in all; a larger one is written as a message at
//     once) beside its task, which stays in the file, leased to nobody,
//     until the commit of its instance's next turn, which takes the
//     result as a message (its id the negative of the task's) and removes
//     the task in the same transaction. Lost in a crash: the activity runs
//     again (at-least-once).
//   - The earliest time a message becomes visible (first.go), read once
//     and kept until the writer commits a change to the messages, so that
//     looking for work, HasWork and NextVisibleAt answer from memory while
//     that time is still to come. Lost in a crash: read again.
//
// So a host takes the work it makes for itself without a fetch
// (store.Handoff, handoff.go): a start commits with its first turn, or
// is locked in memory before its commit makes it visible, a turn's tasks
// are leased in memory once it has committed, and an activity's outcome
// is kept and its instance's next turn committed on the thread that ran
// the activity.
//
// store/postgres keeps locks, leases and results in rows, which the hosts
// of its database share. The operations the two stores say alike are
// written once (store/internal/sqlstore), in SQLite's dialect here
// (dialect.go).
//
// Times are Unix nanoseconds; the store returns them in UTC.
//
// Writes are group-committed: one writer at a time owns the write
// connection (the caller whose write finds none under way commits it
// itself, on its own goroutine: write.go), and the writes that arrive
// while a transaction is being made durable share the next one, each in a
// savepoint of its own (a write that fails undoes only itself). A write
// returns once its transaction is durable, so with many workers the store
// makes far more writes per second than the disk makes syncs, and never
// acknowledges one before it is on disk. Reads use their own connections
// and see the last commit without waiting for the writer. Options.OnCommit,
// when set, is told of each transaction (how many writes it held, how long
// it took): a host's metrics, which the store does not know.
//
// Usage:
//
//	st, err := sqlite.Open("durabox.db", sqlite.Options{})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	st.ReleaseAllLeases(ctx) // this host holds the file: nobody else's work is in flight
//	for {
//		items, err := st.LockNextInstances(ctx, time.Now(), time.Minute, 8, nil)
//		// run each item's turn, then st.CommitTurn(ctx, store.TurnCommit{..., LockToken: item.LockToken})
//	}
package sqlite
