// Package postgres is a store.Store on PostgreSQL, for several Durabox
// hosts sharing one database (durabox serve --db postgres://…). It passes
// the same conformance suite as store/sqlite (store/storetest), and like
// it decides no rule of the model: every message it delivers is the
// engine's.
//
// # The model
//
// Each write is one transaction (no group commit: the server runs many at
// once, and groups their WAL flushes). As in store/sqlite, the writes of
// leases, activity results and audit records appended after the answer
// (store.Audit's AppendAudit) do not wait for the flush
// (synchronous_commit off for their transaction): a server crash may lose
// them, which loses nothing acknowledged. Work is taken with leases, as in store/sqlite: a locked instance
// or an activity task carries a lock token, the host that holds it
// (Options.HostID) and when the lease ends. Hosts that look for work at
// once skip the rows another is taking (SELECT … FOR UPDATE SKIP LOCKED),
// so an instance's turns run on one host at a time. A commit locks the
// instance's row and checks its token in the same transaction: a host
// whose lease expired and whose instance another host took (a paused or
// partitioned host) finds another token, and its late commit is refused
// with store.ErrLeaseLost. Every lock has its own token, so the token is
// the lease's epoch. ReleaseAllLeases ends only this host's leases.
//
// A host takes the work it makes for itself in the commit that makes it
// (store.Handoff, turn.go): a start commits with its first turn, which
// takes the start message unwritten and inserts the instance's row as
// the turn leaves it (or, when the turn cannot commit with it, the row is
// inserted locked for the host), a turn inserts the tasks it leases to it
// leased, and an activity's outcome commits with its instance's next
// turn, which holds the instance by its row's lock (FOR UPDATE) for the
// length of its transaction and writes the row once, at its commit, and
// takes the outcome as a message that is never written, unless the turn
// does not consume it. A hello writes four row versions, its instance's
// row inserted as its first turn leaves it, and no message
// (TestHelloWritesOnPostgres counts them). What other hosts may take is announced with
// NOTIFY after the commit, and each host LISTENs for it on a connection of
// its own (store.Watcher, watch.go). Locking instances takes one statement
// for all of a fetch's candidates (lockBatch), and their messages one
// round trip.
//
// A write transaction sends its statements in batches (pipeTx,
// pipeline.go): its BEGIN, and each statement whose answer nothing reads
// (an insert of history or messages, the instance's row at a turn's end),
// wait and go with the next statement whose answer is read, or with the
// COMMIT. A step of a sequence is three round trips in its transaction.
// An error of a statement that waited fails the whole transaction.
//
// Module bytes live in the database (PutModule), so any host can run any
// instance; each host compiles and caches modules on its own.
//
// What takes work walks an index in its order and stops at its LIMIT,
// however large the backlog behind and whether or not autovacuum has yet
// analyzed the queue tables: the connections plan without bitmap scans
// (plan.go), which read every entry a condition matches, the deleted
// rows' too. TestQueuePlansWalkIndexes holds the plans; TestBacklogCostsPerItem
// counts the rows one instance's backlog reads per item at 1,000 and
// 10,000.
//
// The operations and statements the two SQL stores say alike (modules,
// instance reads, enqueues, purges, a turn's finish, moves and resets) are
// written once (store/internal/sqlstore), in PostgreSQL's dialect here
// (dialect.go: numbered placeholders, rows locked FOR UPDATE, locks and
// leases in columns); this package keeps what is its own: taking work and
// leasing tasks with SKIP LOCKED, a commit's check of its lock token, its
// schema, and reconnecting.
//
// # Schema
//
// Open creates the schema in an empty database schema (search_path in the
// URL chooses one), migrates an older one, and refuses, without changing
// anything, a schema that holds other tables or a newer Durabox's. The
// version is kept in the table durabox_meta. Hosts starting at once
// prepare it under an advisory lock. No index of instances covers a
// column a turn of a running instance changes (updated_at, what it waits
// on, the result; the finished ones are indexed by finished_at, set when
// they finish), so that a step's one update of the row is HOT: no index
// entry written (RATIONALE.md, "Why does a step write its instance's row
// once, HOT?").
//
// # Faults
//
// A wrong URL, or a server that does not answer within
// Options.ConnectTimeout, fails Open with what to do. Once open, a
// dropped connection (a server restart, pg_terminate_backend) is replaced;
// a transaction that failed before its commit was sent runs again, with a
// backoff (retry.go). A commit whose answer was lost is reported, not
// repeated: a host then abandons the turn and runs it again, and the lock
// token refuses a commit that would write it twice.
//
// # Usage
//
//	s, err := postgres.Open("postgres://durabox@db:5432/durabox", postgres.Options{HostID: "host-1"})
//	if err != nil { … }
//	defer s.Close()
//	h, err := host.New(s, host.Options{…})
package postgres
