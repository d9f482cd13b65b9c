package sqlstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/durabox/durabox/engine"
)

// Dialect is what one SQL store says differently from the other: the text
// of some SQL, and what the store keeps beside the database. The
// statements written once (Tx, Store) are written with ? placeholders and
// put in the store's words by Rebind.
type Dialect struct {
	// Name begins the store's errors ("sqlite: …", "postgres: …").
	Name string
	// Numbered says the database numbers its placeholders ($1, $2, …,
	// PostgreSQL) where the statements write ? (SQLite).
	Numbered bool
	// NoRows reports whether err says a query found no row (each driver
	// has its own sentinel).
	NoRows func(err error) bool
	// Lock ends a SELECT of a row the transaction goes on to change: " FOR
	// UPDATE" where several hosts write the database at once, so that a
	// second writer waits for the first; empty where the database has one
	// writer (SQLite: the transaction holds the whole file).
	Lock string
	// SkipLocked ends a SELECT of rows to change of which another writer
	// may be changing some at once: " FOR UPDATE SKIP LOCKED", or empty
	// (SQLite).
	SkipLocked string
	// MessageKind is the expression of a message's event kind in the
	// messages table: a column of its own (PostgreSQL), or read from the
	// JSON payload (SQLite).
	MessageKind string
	// InsertMessage is the INSERT of a message for an instance from its
	// kind, JSON payload, visible_at and enqueued_at, then the instance's
	// id; it inserts nothing when there is no such instance.
	InsertMessage string
	// InsertStart is the INSERT of a message visible to start
	// (VisibleToStart) from its kind, JSON payload and enqueued_at, then
	// the instance's id and its parent's (NULL for none), which takes its
	// rank (fair_rank) in the fair order of starts, as
	// store.Store.LockNextActivities's tasks take theirs: the rank of the
	// first start waiting, or, for a child's, the one after the last of
	// its parent's children's starts waiting, whichever is larger, so that
	// a parent's children take one turn a round among the other starts.
	// Both are index lookups, whatever the backlog. It inserts nothing
	// when there is no such instance.
	InsertStart string
	// InsertInstance is the INSERT of a Pending instance in execution 1
	// from its id, name, status, input, creation time, parent and parent's
	// event (NULL for none), then its module's hash; it inserts nothing
	// when the id is taken or the module is not deployed. (SQLite's counts
	// the instance's first delivery in advance, by the store's run.)
	InsertInstance string
	// FinishedAt, when not empty, is the column of when an instance
	// finished, NULL while it has not, which a filter of the instances
	// finished before a time compares (PostgreSQL's finished_at, indexed
	// where updated_at, which each turn changes, is not); empty, the
	// filter compares the updated_at of the finished ones.
	FinishedAt string
	// Seq is the column that orders instances created at the same time,
	// in the order they were created.
	Seq string
	// NextModuleSeq is the expression of the seq of a module deployed now,
	// which orders modules newest first.
	NextModuleSeq string
	// Repoint is the INSERT that makes the newest module that registers
	// the orchestration (its one argument, as ?1) its module, if there is
	// one and no module is.
	Repoint string
	// Unlock is the SET clause with which a commit lets an instance's
	// turn lock go and counts its next delivery: the lock's columns
	// cleared and no delivery counted (PostgreSQL, whose locks are rows);
	// on SQLite, whose locks are in memory, the next delivery counted in
	// advance by the store's run (store/sqlite's locks.go).
	Unlock string
	// EndLock, when not empty, follows the SET clause of an operation
	// that ends an instance's expired lock without counting a delivery
	// (a move): ", " and the lock's columns cleared (PostgreSQL). SQLite's
	// locks are in memory, which the operation tells itself.
	EndLock string
	// NotHeld returns the condition, and its arguments, that selects the
	// activity tasks no worker holds at now, or with anyLease that no
	// worker has a lease of, expired or not: a condition on the lease's
	// columns (PostgreSQL), or the ids the store's memory does not hold
	// (SQLite).
	NotHeld func(now int64, anyLease bool) (cond string, args []any, err error)
	// ReadHistory, when not nil, reads the events of one execution, in
	// order, in the store's own way (SQLite reads a long one in two halves
	// at once, on two of its readers); nil reads them in one query on q.
	ReadHistory func(ctx context.Context, q DB, id string, execution int64) ([]engine.Event, error)
	// MessagesChanged, when not nil, is told of each write that inserts
	// messages (how many) or deletes some (1), before it commits: SQLite
	// remembers the earliest visible message between commits
	// (store/sqlite's first.go).
	MessagesChanged func(n int64)
}

// Rebind returns query, written with ? placeholders, in the dialect's:
// the n-th ? becomes $n where placeholders are numbered, and ?n stays the
// argument n ($n) where one argument is used twice. A ? inside a quoted
// string is left alone.
func (d *Dialect) Rebind(query string) string {
	if !d.Numbered || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n, quoted := 0, false
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(query[i+1 : j])
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Placeholder is argument n (from 1) in the dialect's SQL, for a Where.
func (d *Dialect) Placeholder(n int) string {
	if d.Numbered {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// messagesChanged tells MessagesChanged of n inserted messages or a
// deletion, if it listens.
func (d *Dialect) messagesChanged(n int64) {
	if d.MessagesChanged != nil && n > 0 {
		d.MessagesChanged(n)
	}
}

// Row is one row of a query (*sql.Row, pgx.Row).
type Row interface {
	Scan(dest ...any) error
}

// QueryRows is the rows of a query, which the caller closes.
type QueryRows interface {
	Rows
	Close()
}

// DB is what statements run on, as each store's driver adapter gives it:
// a pool of connections, a connection or a transaction. Its queries are
// in the dialect's SQL already (Rebind).
type DB interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Send runs a statement whose answer the caller does not read. A
	// store may send it later, with the next statement or the commit, in
	// one round trip (PostgreSQL does; SQLite runs it at once): an error
	// of it then fails the transaction, and it changes nothing unless the
	// transaction commits.
	Send(ctx context.Context, query string, args ...any) error
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (QueryRows, error)
}
