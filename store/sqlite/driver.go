package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// driverName is the driver the store opens its connections with:
// go-sqlite3's, with these changes.
//
//   - The query planner stability guarantee is on on every connection
//     (qpsg.go; RATIONALE, "Why does the SQLite store turn on the query
//     planner stability guarantee?"). Without it, SQLite marks a statement
//     whose plan looks at a bound value (a LIMIT ?, an x = ? the plan only
//     filters by) to be prepared again when its values are cleared, which
//     go-sqlite3 does every time it puts a statement back in its cache:
//     every such statement was parsed and planned anew on every use.
//   - A connection keeps the statements that begin and end the store's
//     transactions and savepoints prepared (conn).
//   - The write connection keeps its statement journal in memory, and
//     limits the WAL it starts over to walLimit (writerSettings).
//   - While countSteps is set (the store's tests), every connection counts
//     the steps of SQLite's virtual machine (steps.go).
const driverName = "durabox-sqlite3"

var registerDriver sync.Once

// register registers driverName, once.
func register() {
	registerDriver.Do(func() {
		sql.Register(driverName, storeDriver{&sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			if _, err := stablePlans(c, 1); err != nil {
				return err
			}
			if err := countStepsOn(c); err != nil {
				return err
			}
			return writerSettings(c)
		}}})
	})
}

// writerSettings sets, unless c is query-only:
//
//   - temp_store = MEMORY, so that the statement journal in which SQLite
//     keeps what a savepoint would undo stays in memory. A batch of writes
//     runs each in a savepoint, and SQLite moves that journal to a
//     temporary file once one savepoint has journaled 64 KiB; from then on
//     until the commit, every page a write changes costs two write calls
//     into that file (RATIONALE, "Why does the store keep its statement
//     journal in memory?"). A read connection keeps the default, so that a
//     large query's temporary tables do not take memory.
//   - journal_size_limit = walLimit, so that a WAL that grew (a large
//     purge while reads held old snapshots, which kept checkpoints from
//     starting it over) shrinks back to walLimit when it next starts over,
//     instead of keeping its size on disk for good (RATIONALE, "Why does
//     the SQLite store limit the WAL it starts over?").
func writerSettings(c *sqlite3.SQLiteConn) error {
	rows, err := c.Query(`PRAGMA query_only`, nil)
	if err != nil {
		return err
	}
	v := make([]driver.Value, 1)
	err = rows.Next(v)
	rows.Close()
	if err != nil || v[0] == int64(1) {
		return err
	}
	_, err = c.Exec(fmt.Sprintf(`PRAGMA temp_store = MEMORY; PRAGMA journal_size_limit = %d`, walLimit), nil)
	return err
}

// walLimit is the most the WAL keeps on disk once it starts over: about
// 4 MiB of it are the 1,000 pages after which SQLite checkpoints, and the
// rest room for a batch.
const walLimit = 16 << 20

// storeDriver opens go-sqlite3's connections as conns.
type storeDriver struct{ *sqlite3.SQLiteDriver }

func (d storeDriver) Open(dsn string) (driver.Conn, error) {
	c, err := d.SQLiteDriver.Open(dsn)
	if err != nil {
		return nil, err
	}
	return &conn{SQLiteConn: c.(*sqlite3.SQLiteConn)}, nil
}

// The statements that begin and end the store's transactions and its
// writes' savepoints, which a conn prepares once.
const (
	sqlBegin          = `BEGIN`
	sqlBeginImmediate = `BEGIN IMMEDIATE`
	sqlCommit         = `COMMIT`
	sqlRollback       = `ROLLBACK`
	sqlSavepoint      = `SAVEPOINT write`
	sqlRelease        = `RELEASE write`
	sqlRollbackTo     = `ROLLBACK TO write`
)

// conn is a go-sqlite3 connection that prepares the statements above the
// first time it runs each, and runs them prepared from then on. go-sqlite3
// parses a statement run without arguments anew every time, and a batch of
// several writes runs two of these for every write in it (its savepoint),
// besides its BEGIN and COMMIT. database/sql uses a connection from one
// goroutine at a time, so prepared needs no lock.
type conn struct {
	*sqlite3.SQLiteConn
	prepared map[string]driver.Stmt
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if len(args) > 0 || !preparedOnce(query) {
		return c.SQLiteConn.ExecContext(ctx, query, args)
	}
	st, ok := c.prepared[query]
	if !ok {
		var err error
		if st, err = c.SQLiteConn.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		if c.prepared == nil {
			c.prepared = make(map[string]driver.Stmt)
		}
		c.prepared[query] = st
	}
	return st.(driver.StmtExecContext).ExecContext(ctx, nil)
}

// preparedOnce reports whether query is one of the statements a conn keeps
// prepared.
func preparedOnce(query string) bool {
	switch query {
	case sqlBegin, sqlBeginImmediate, sqlCommit, sqlRollback, sqlSavepoint, sqlRelease, sqlRollbackTo:
		return true
	}
	return false
}

// Close finalizes the prepared statements, then closes the connection.
func (c *conn) Close() error {
	var err error
	for _, st := range c.prepared {
		err = errors.Join(err, st.Close())
	}
	return errors.Join(err, c.SQLiteConn.Close())
}
