package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/durabox/durabox/store"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// Group commit. Every write runs on the writer goroutine, which owns the
// store's one write connection. Writes that arrive while a transaction is
// on its way to disk wait for it, then go to disk together: one
// transaction, one sync, each write in a savepoint of its own so that a
// write that fails undoes only itself. A write returns only once the
// transaction that holds it is durable (as durable as Options.Durability
// says), so nothing is acknowledged before it is on disk.
//
// Two kinds of write need not survive a power cut, and commit without
// waiting for the disk to sync when a batch holds nothing else (the next
// durable commit syncs them with it: the WAL is synced as a whole):
//
//   - leases: locking work and letting it go. A restarted host releases
//     every lease, and losing one delivery's count only delays the verdict
//     on poison work.
//   - activity results. Losing one loses nothing acknowledged: the task,
//     whose removal was in the same transaction, is delivered again and the
//     activity runs again, which at-least-once allows. Its instance's next
//     turn, which records the result in history, is durable.
//
// A process crash loses neither: SQLite has handed the WAL to the system.

// maxBatch bounds how many writes share one transaction, so that none
// waits behind an unbounded batch.
const maxBatch = 512

// errClosed is returned by writes after Close.
var errClosed = errors.New("sqlite: the store is closed")

// writeFunc is one write: it runs inside the batch's transaction and must
// not commit or roll it back.
type writeFunc func(ctx context.Context, tx txConn) error

type writeOp struct {
	fn writeFunc
	// unsynced marks a write that need not wait for a sync.
	unsynced bool
	// after, when set, is told how the write ended (nil: committed) once
	// its transaction has, before the write returns.
	after func(err error)
	done  chan error
}

// write runs fn on the writer goroutine and returns once its transaction is
// committed, or with fn's error (fn's changes undone) or the commit's. A
// ctx that ends before the writer takes fn stops it from running; once the
// writer has taken it, write waits for the outcome, so it never reports a
// failure for a write that was committed.
func (s *Store) write(ctx context.Context, fn writeFunc) error {
	return s.submit(ctx, &writeOp{fn: fn, done: make(chan error, 1)})
}

// writeThen is write, with after told how the write ended before it
// returns, if the writer took it: after a commit, the write's changes are
// what every new read sees.
func (s *Store) writeThen(ctx context.Context, fn writeFunc, after func(err error)) error {
	return s.submit(ctx, &writeOp{fn: fn, after: after, done: make(chan error, 1)})
}

// writeUnsynced is write for a lease or an activity result: it may return
// before the disk has synced the commit.
func (s *Store) writeUnsynced(ctx context.Context, fn writeFunc) error {
	return s.submit(ctx, &writeOp{fn: fn, unsynced: true, done: make(chan error, 1)})
}

func (s *Store) submit(ctx context.Context, op *writeOp) error {
	select {
	case s.writes <- op:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stop:
		return errClosed
	}
	return <-op.done
}

// writer takes writes until the store closes; each batch is whatever
// arrived while the previous one was committed.
func (s *Store) writer() {
	defer close(s.writerDone)
	for {
		var batch []*writeOp
		select {
		case op := <-s.writes:
			batch = append(batch, op)
		case <-s.stop:
			return
		}
	more:
		for len(batch) < maxBatch {
			select {
			case op := <-s.writes:
				batch = append(batch, op)
			default:
				break more
			}
		}
		s.commitBatch(batch)
	}
}

// commitBatch runs a batch in one transaction and tells each write how it
// ended.
func (s *Store) commitBatch(batch []*writeOp) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	began := time.Now()
	err := s.inWriteTx(ctx, !slices.ContainsFunc(batch, func(op *writeOp) bool { return !op.unsynced }), func(c txConn) (bool, error) {
		if len(batch) == 1 {
			// Alone in its transaction, a write needs no savepoint: if it
			// fails, rolling the transaction back undoes just it.
			errs[0] = batch[0].fn(ctx, c)
			return errs[0] == nil, nil
		}
		for i, op := range batch {
			var err error
			if errs[i], err = savepoint(ctx, c, op.fn); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	s.batches.Add(1)
	for i, op := range batch {
		if err != nil {
			errs[i] = errors.Join(errs[i], fmt.Errorf("sqlite: commit: %w", err))
		}
		if op.after != nil {
			op.after(errs[i])
		}
		op.done <- errs[i]
	}
	if s.opts.OnCommit != nil {
		s.opts.OnCommit(store.CommitStats{Writes: len(batch), Duration: time.Since(began), Err: err})
	}
}

// inWriteTx runs fn in a transaction on the write connection, and commits
// it if fn says so (rolls it back otherwise, or if fn fails). The store
// begins and ends the transaction with statements of its own (txConn).
// unsyncedOnly says no write in it need wait for a sync (setSync).
func (s *Store) inWriteTx(ctx context.Context, unsyncedOnly bool, fn func(c txConn) (commit bool, err error)) (err error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Close()) }()
	if err := s.setSync(ctx, c, unsyncedOnly); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	commit, err := fn(c)
	if err == nil && commit {
		if _, err = c.ExecContext(ctx, `COMMIT`); err == nil {
			return nil
		}
	}
	if rollbackErr := rollback(ctx, c); rollbackErr != nil {
		// database/sql opens a fresh connection, with the store's
		// settings.
		s.syncMode = s.opts.Durability.synchronous()
		return errors.Join(err, rollbackErr)
	}
	return err
}

// rollback rolls back c's transaction. If that fails and c is still in a
// transaction, which would fail every use of c after it, it has
// database/sql discard c, and returns why.
func rollback(ctx context.Context, c *sql.Conn) error {
	_, err := c.ExecContext(ctx, `ROLLBACK`)
	if err == nil || !inTransaction(c) {
		return nil
	}
	return errors.Join(fmt.Errorf("roll back: %w", err), c.Raw(func(any) error { return driver.ErrBadConn }))
}

// inTransaction reports whether c is in a transaction (or cannot tell).
func inTransaction(c *sql.Conn) bool {
	in := true
	_ = c.Raw(func(dc any) error {
		if conn, ok := dc.(*sqlite3.SQLiteConn); ok {
			in = !conn.AutoCommit()
		}
		return nil
	})
	return in
}

// setSync sets what the next commit on c, the write connection, waits for:
// the store's durability, or, for a batch of unsynced writes only, no sync
// at all.
func (s *Store) setSync(ctx context.Context, c *sql.Conn, unsyncedOnly bool) error {
	mode := s.opts.Durability.synchronous()
	if unsyncedOnly {
		mode = DurabilityNormal.synchronous()
	}
	if mode == s.syncMode {
		return nil
	}
	if _, err := c.ExecContext(ctx, `PRAGMA synchronous = `+mode); err != nil {
		return err
	}
	s.syncMode = mode
	return nil
}

// savepoint runs fn in a savepoint of tx and undoes its changes if it
// fails, returning fn's error; txErr is an error that leaves tx unusable,
// which fails the whole batch.
func savepoint(ctx context.Context, tx txConn, fn writeFunc) (fnErr, txErr error) {
	if _, txErr = tx.ExecContext(ctx, `SAVEPOINT write`); txErr != nil {
		return nil, txErr
	}
	if fnErr = fn(ctx, tx); fnErr != nil {
		_, txErr = tx.ExecContext(ctx, `ROLLBACK TO write; RELEASE write`)
		return fnErr, txErr
	}
	_, txErr = tx.ExecContext(ctx, `RELEASE write`)
	return nil, txErr
}
