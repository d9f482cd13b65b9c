package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipeTx is a write transaction whose statements go to the server in as
// few round trips as their answers allow. A statement whose answer the
// caller does not read waits (Send), as BEGIN does, and goes out with the
// next statement whose answer the caller reads (Exec, Query, QueryRow,
// SendBatch), or with the COMMIT, in one batch. An error of a statement
// that waited fails the transaction: every later call returns it and
// Commit rolls back instead, so that a commit is all of it or none of it,
// as when each statement waited for its answer (RATIONALE.md, "Why does a
// PostgreSQL commit send its statements in batches?").
type pipeTx struct {
	*pipeline
	closed bool
}

// pipeline is the connection of a pipeTx and its savepoints, with the
// statements waiting to go.
type pipeline struct {
	conn    *pgxpool.Conn
	waiting pgx.Batch
	// err is the error of a statement that waited, which fails the
	// transaction; checks is whether a waiting statement checks
	// (SendCheck).
	err        error
	checks     bool
	savepoints int
}

// begin begins a transaction on a connection of pool; its BEGIN waits for
// the first statement.
func begin(ctx context.Context, pool *pgxpool.Pool) (*pipeTx, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	p := &pipeline{conn: conn}
	p.waiting.Queue(`BEGIN`)
	return &pipeTx{pipeline: p}, nil
}

// Send queues a statement whose answer the caller does not read: it goes
// with the next one whose answer is read, or with the COMMIT.
func (t *pipeTx) Send(query string, args ...any) error {
	if t.err != nil {
		return t.err
	}
	t.waiting.Queue(query, args...)
	return nil
}

// SendRows queues a statement whose rows read reads once they come, with
// the next statement whose answer is read or with the COMMIT: read's
// error fails the transaction, but cannot stop a COMMIT sent with it, so
// read only reads. A statement whose answer decides whether to commit is
// SendCheck's.
func (t *pipeTx) SendRows(read func(pgx.Rows) error, query string, args ...any) error {
	if t.err != nil {
		return t.err
	}
	t.waiting.Queue(query, args...).Query(read)
	return nil
}

// SendCheck is SendRows for a statement whose rows check may refuse
// (a lease lost): the check's error fails the transaction, and the
// statement goes before the COMMIT, not with it (Check).
func (t *pipeTx) SendCheck(check func(pgx.Rows) error, query string, args ...any) error {
	if err := t.SendRows(check, query, args...); err != nil {
		return err
	}
	t.checks = true
	return nil
}

// Check sends the waiting statements if one of them checks (SendCheck),
// so that the transaction commits only once every check has passed.
func (t *pipeTx) Check(ctx context.Context) error {
	if t.err != nil {
		return t.err
	}
	if !t.checks {
		return nil
	}
	return t.SendBatch(ctx, &pgx.Batch{}).Close()
}

// SendBatch sends the waiting statements and b's in one batch, and
// returns the results of b's.
func (t *pipeTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.err != nil {
		return failedBatch{t.err}
	}
	waiting := t.waiting.QueuedQueries
	if len(waiting) == 0 {
		return t.conn.SendBatch(ctx, b)
	}
	t.waiting, t.checks = pgx.Batch{}, false
	all := &pgx.Batch{QueuedQueries: append(waiting, b.QueuedQueries...)}
	results := t.conn.SendBatch(ctx, all)
	if err := t.readWaiting(results, waiting); err != nil {
		return failedBatch{err}
	}
	return results
}

// readWaiting reads the results of the statements that waited, the first
// of results; an error fails the transaction.
func (t *pipeTx) readWaiting(results pgx.BatchResults, waiting []*pgx.QueuedQuery) error {
	for _, q := range waiting {
		var err error
		if q.Fn != nil {
			err = q.Fn(results)
		} else {
			_, err = results.Exec()
		}
		if err != nil {
			t.err = err
			results.Close()
			return err
		}
	}
	return nil
}

// Exec runs a statement, with the waiting ones before it.
func (t *pipeTx) Exec(ctx context.Context, query string, args ...any) (pgconn.CommandTag, error) {
	if t.err == nil && len(t.waiting.QueuedQueries) == 0 {
		return t.conn.Exec(ctx, query, args...)
	}
	results := t.sendOne(ctx, query, args)
	tag, err := results.Exec()
	return tag, errors.Join(err, results.Close())
}

// QueryRow runs a query of one row, with the waiting statements before
// it.
func (t *pipeTx) QueryRow(ctx context.Context, query string, args ...any) pgx.Row {
	if t.err == nil && len(t.waiting.QueuedQueries) == 0 {
		return t.conn.QueryRow(ctx, query, args...)
	}
	return batchRow{t.sendOne(ctx, query, args)}
}

// Query runs a query, with the waiting statements before it.
func (t *pipeTx) Query(ctx context.Context, query string, args ...any) (pgx.Rows, error) {
	if t.err == nil && len(t.waiting.QueuedQueries) == 0 {
		return t.conn.Query(ctx, query, args...)
	}
	results := t.sendOne(ctx, query, args)
	rows, err := results.Query()
	if err != nil {
		return nil, errors.Join(err, results.Close())
	}
	return &batchRows{Rows: rows, results: results}, nil
}

// sendOne sends the waiting statements and query, in one batch.
func (t *pipeTx) sendOne(ctx context.Context, query string, args []any) pgx.BatchResults {
	var b pgx.Batch
	b.Queue(query, args...)
	return t.SendBatch(ctx, &b)
}

// savepoint runs fn in a savepoint of t: when fn fails, what it did is
// undone and the transaction goes on. The savepoint's statements wait, as
// t's do.
func (t *pipeTx) savepoint(ctx context.Context, fn func(sp *pipeTx) error) error {
	t.savepoints++
	name := fmt.Sprintf("sp_%d", t.savepoints)
	if err := t.Send(`SAVEPOINT ` + name); err != nil {
		return err
	}
	if err := fn(&pipeTx{pipeline: t.pipeline}); err != nil {
		// An error of a statement that waited stays the transaction's
		// (t.err): the savepoint does not undo it.
		return errors.Join(err, t.Send(`ROLLBACK TO SAVEPOINT `+name))
	}
	return t.Send(`RELEASE SAVEPOINT ` + name)
}

// Commit sends the waiting statements and COMMIT, in one batch, and
// gives the connection back to the pool; call Check first. When a
// statement failed, it rolls back instead and returns its error.
func (t *pipeTx) Commit(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	if t.err == nil && t.checks {
		t.err = errors.New("postgres: a commit with statements not yet checked (pipeTx.Check)")
	}
	if t.err != nil {
		return errors.Join(t.err, t.Rollback(context.WithoutCancel(ctx)))
	}
	waiting := t.waiting.QueuedQueries
	if len(waiting) == 1 && t.conn.Conn().PgConn().TxStatus() == 'I' {
		// Only the BEGIN: nothing was written.
		return t.Rollback(ctx)
	}
	t.waiting = pgx.Batch{}
	all := &pgx.Batch{QueuedQueries: waiting}
	all.Queue(`COMMIT`)
	results := t.conn.SendBatch(ctx, all)
	err := t.readWaiting(results, waiting)
	if err == nil {
		var tag pgconn.CommandTag
		tag, err = results.Exec()
		err = errors.Join(err, results.Close())
		if err == nil && tag.String() == "ROLLBACK" {
			err = pgx.ErrTxCommitRollback
		}
	}
	if err != nil {
		return errors.Join(err, t.Rollback(context.WithoutCancel(ctx)))
	}
	t.closed = true
	t.conn.Release()
	return nil
}

// Rollback ends the transaction, undoing what it did, and gives the
// connection back to the pool (which closes it if it is broken). Rolling
// back a transaction that has ended returns pgx.ErrTxClosed.
func (t *pipeTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	t.waiting = pgx.Batch{}
	var err error
	if c := t.conn.Conn(); !c.IsClosed() && c.PgConn().TxStatus() != 'I' {
		_, err = c.Exec(ctx, `ROLLBACK`)
	}
	t.conn.Release()
	return err
}

// batchRow is the row of the last statement of a batch; reading it ends
// the batch.
type batchRow struct{ results pgx.BatchResults }

func (r batchRow) Scan(dest ...any) error {
	err := r.results.QueryRow().Scan(dest...)
	if cerr := r.results.Close(); err == nil {
		err = cerr
	}
	return err
}

// batchRows is the rows of the last statement of a batch; closing them
// ends the batch.
type batchRows struct {
	pgx.Rows
	results pgx.BatchResults
	err     error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.results != nil {
		r.err, r.results = r.results.Close(), nil
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// failedBatch is the results of a batch that failed before its last
// statements ran.
type failedBatch struct{ err error }

func (b failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b failedBatch) Query() (pgx.Rows, error)         { return nil, b.err }
func (b failedBatch) QueryRow() pgx.Row                { return failedRow(b) }
func (b failedBatch) Close() error                     { return b.err }

type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }
