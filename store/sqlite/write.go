package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/durabox/durabox/store"
)

// Group commit. Every write runs on the store's one write connection, in
// a batch that one writer at a time commits: whichever caller finds no
// batch under way commits its own write, with every write queued by then,
// on its own goroutine. Writes that arrive while a transaction is on its
// way to disk queue, and the writer, once done, hands the queue to the
// first of their callers, who commits them together: one transaction, one
// sync, each write in a savepoint of its own so that a write that fails
// undoes only itself. An idle store thus commits a write without waking
// another thread (a hand-off between threads is a futex call, which on a
// VM costs more than a small commit's statements), and a busy one batches
// as a writer goroutine would. A write returns only once the transaction
// that holds it is durable (as durable as Options.Durability says), so
// nothing is acknowledged before it is on disk.
//
// Three kinds of write need not survive a power cut, and commit without
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
//   - audit records appended (AppendAudit). Each is written once the
//     change it records has been answered, so a sync of its own would
//     only add a second sync to the path of every update or purge
//     through the API. (A start's, a raise's, a cancel's and a
//     terminate's record commits with the change, synced as it is:
//     store.NewInstance.Audit, Enqueue's audit.)
//
// A process crash loses none of them: SQLite has handed the WAL to the
// system.

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
	// lead tells a queued write's caller to commit the queue.
	lead chan struct{}
}

// writers is the queue of writes and who commits them.
type writers struct {
	mu    sync.Mutex
	queue []*writeOp
	// writing is set while a caller commits batches.
	writing bool
	// closed is set by Close: no write is taken after it.
	closed bool
	// idle is signalled when writing is cleared.
	idle *sync.Cond
}

// write runs fn in the store's next transaction and returns once that is
// committed, or with fn's error (fn's changes undone) or the commit's. A
// ctx that ends while fn waits in the queue stops it from running; once a
// batch has taken it, write waits for the outcome, so it never reports a
// failure for a write that was committed.
func (s *Store) write(ctx context.Context, fn writeFunc) error {
	return s.submit(ctx, &writeOp{fn: fn})
}

// writeThen is write, with after told how the write ended before it
// returns, if a batch took it: after a commit, the write's changes are
// what every new read sees.
func (s *Store) writeThen(ctx context.Context, fn writeFunc, after func(err error)) error {
	return s.submit(ctx, &writeOp{fn: fn, after: after})
}

// writeUnsynced is write for a lease, an activity result or an audit
// record: it may return before the disk has synced the commit.
func (s *Store) writeUnsynced(ctx context.Context, fn writeFunc) error {
	return s.submit(ctx, &writeOp{fn: fn, unsynced: true})
}

// submit queues op and, if no batch is under way, commits the queue
// itself; otherwise it waits for its outcome, or to be handed the queue.
func (s *Store) submit(ctx context.Context, op *writeOp) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op.done, op.lead = make(chan error, 1), make(chan struct{}, 1)
	w := &s.writers
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	w.queue = append(w.queue, op)
	if !w.writing {
		w.writing = true
		return s.lead(op)
	}
	w.mu.Unlock()
	select {
	case err := <-op.done:
		return err
	case <-op.lead:
		w.mu.Lock()
		return s.lead(op)
	case <-ctx.Done():
	}
	w.mu.Lock()
	if i := slices.Index(w.queue, op); i >= 0 {
		w.queue = slices.Delete(w.queue, i, i+1)
		select {
		case <-op.lead:
			// Handed the queue as ctx ended: hand it on.
			w.handOn()
		default:
		}
		w.mu.Unlock()
		return ctx.Err()
	}
	w.mu.Unlock()
	// A batch took op: wait for its outcome.
	return <-op.done
}

// lead commits the first batch of the queue, op among it, with
// s.writers.mu held on entry and released on return; then it hands the
// queue on, and returns op's outcome.
func (s *Store) lead(op *writeOp) error {
	w := &s.writers
	n := min(len(w.queue), maxBatch)
	batch := slices.Clone(w.queue[:n])
	w.queue = slices.Delete(w.queue, 0, n)
	w.mu.Unlock()
	s.commitBatch(batch)
	w.mu.Lock()
	w.handOn()
	w.mu.Unlock()
	return <-op.done
}

// handOn hands the queue, if any write waits in it, to the caller of the
// first, so that no caller commits for others for longer than its own
// batch; otherwise no batch is under way any more. It needs w.mu held.
func (w *writers) handOn() {
	if len(w.queue) > 0 {
		w.queue[0].lead <- struct{}{}
		return
	}
	w.writing = false
	w.idle.Broadcast()
}

// commitBatch runs a batch in one transaction and tells each write how it
// ended.
func (s *Store) commitBatch(batch []*writeOp) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	began := time.Now()
	unsynced := !slices.ContainsFunc(batch, func(op *writeOp) bool { return !op.unsynced })
	err := s.inWriteTx(ctx, unsynced, func(c txConn) (bool, error) {
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
	s.first.commit()
	if s.leases.queued.Swap(false) {
		s.leases.reset() // its tasks may be below a floor
	}
	for i, op := range batch {
		if err != nil {
			errs[i] = errors.Join(errs[i], fmt.Errorf("sqlite: commit: %w", err))
		}
		if isFull(errs[i]) {
			s.full.Store(true)
			errs[i] = fmt.Errorf("sqlite: %w (%s): nothing of the write was written; free space on it, and writes succeed again: %w", store.ErrFull, s.path, errs[i])
		} else if errs[i] != nil {
			errs[i] = s.diskFailed(errs[i])
		}
		if op.after != nil {
			op.after(errs[i])
		}
		op.done <- errs[i]
	}
	if s.opts.OnCommit != nil {
		s.opts.OnCommit(store.CommitStats{Writes: len(batch), Unsynced: unsynced, Duration: time.Since(began), Err: err})
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
	if _, err := c.ExecContext(ctx, sqlBeginImmediate); err != nil {
		return err
	}
	commit, err := fn(c)
	if err == nil && commit {
		if _, err = c.ExecContext(ctx, sqlCommit); err == nil {
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
	_, err := c.ExecContext(ctx, sqlRollback)
	if err == nil || !inTransaction(c) {
		return nil
	}
	return errors.Join(fmt.Errorf("roll back: %w", err), c.Raw(func(any) error { return driver.ErrBadConn }))
}

// inTransaction reports whether c is in a transaction (or cannot tell).
func inTransaction(c *sql.Conn) bool {
	in := true
	_ = c.Raw(func(dc any) error {
		if sc, ok := dc.(*conn); ok {
			in = !sc.AutoCommit()
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
	if _, txErr = tx.ExecContext(ctx, sqlSavepoint); txErr != nil {
		return nil, txErr
	}
	if fnErr = fn(ctx, tx); fnErr != nil {
		if _, txErr = tx.ExecContext(ctx, sqlRollbackTo); txErr == nil {
			_, txErr = tx.ExecContext(ctx, sqlRelease)
		}
		return fnErr, txErr
	}
	_, txErr = tx.ExecContext(ctx, sqlRelease)
	return nil, txErr
}
