// Package sqlstore is one SQL store with two dialects: what store/sqlite
// and store/postgres share, so that an operation is written once and the
// stores differ only where they really do.
//
// Store holds the operations in which the two differ only in their SQL's
// words (modules, instance reads and lists, histories, enqueues, purges),
// and Tx the statements of a write transaction both say alike (a turn's
// finish, a continue-as-new, a move, a reset's restart, purges), written
// with ? placeholders over a Dialect: numbered placeholders or not, row
// locks (FOR UPDATE, SKIP LOCKED) or none, a message's kind as a column or
// read from its JSON, the few statements worded apart, and how locks and
// leases are held (in memory on SQLite, whose file has one host; in rows on
// PostgreSQL, shared by several hosts): the SET clause that lets a lock go,
// the condition that selects the activity tasks no worker holds. Each
// store embeds a Store, made by New from its dialect, its reads and its
// writes, and adapts its driver to DB.
//
// The rest differs in more than words: taking work and leasing tasks, a
// commit's check of its lock, history appends and activity queueing, each
// tuned to its driver. For those, a store gives its statements through
// small interfaces (TurnTx, ResetTx, ...), which its write transaction
// type implements by embedding Tx and adding its own; the functions here
// (CommitTurn, MoveInstance, ResetInstance) decide what to run and check
// what comes back: what a turn's commit checks and in which order it
// writes, the encoding of times and message visibility, and the list
// cursor. Error texts of those functions carry no store name: each store
// wraps them behind its own ("sqlite: …", "postgres: …"); Store's carry
// the dialect's name.
package sqlstore
