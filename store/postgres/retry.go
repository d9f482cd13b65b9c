package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/durabox/durabox/store"
)

// Reconnecting. The pool replaces a connection the server dropped (a
// restart, pg_terminate_backend, a network cut) with a new one when it is
// next needed; a transaction that was on it failed. A write whose
// transaction failed before its commit was sent changed nothing, so it
// runs again, after a pause that doubles from backoffStart up to
// backoffMax, for up to retries tries. A commit whose answer was lost
// is not run again: it may have been applied, so the error goes to the
// caller (a host abandons the turn, and its lock token fences off
// anything that would repeat it).
const (
	retries      = 6
	backoffStart = 50 * time.Millisecond
	backoffMax   = 2 * time.Second
)

// errCommitUnknown marks a commit whose outcome is not known.
var errCommitUnknown = errors.New("the connection failed during the commit; it may or may not have been applied")

// retry runs tx, a transaction, again while it fails transiently before
// its commit. When it gives up on a transient failure, or the commit's
// answer was lost, the error wraps store.ErrUnavailable: the caller may ask
// again later (a host answers 503).
func (s *Store) retry(ctx context.Context, tx func() error) error {
	pause := backoffStart
	for try := 1; ; try++ {
		err := tx()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errCommitUnknown):
			return fmt.Errorf("postgres: %w: %w", store.ErrUnavailable, err)
		case !transient(err):
			return err
		case try == retries:
			return fmt.Errorf("postgres: %w (tried %d times): %w", store.ErrUnavailable, try, err)
		}
		s.opts.Logger.Warn("database transaction failed; trying again", "try", try, "err", err)
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
		pause = min(2*pause, backoffMax)
	}
}

// inTx runs fn in a transaction and commits it, once the statements whose
// answers may refuse it have answered (pipeTx.Check). An error from the
// commit itself that leaves its outcome unknown wraps errCommitUnknown.
func (s *Store) inTx(ctx context.Context, fn func(tx *pipeTx) error) error {
	tx, err := begin(ctx, s.pool)
	if err != nil {
		return err
	}
	err = fn(tx)
	if err == nil {
		err = tx.Check(ctx)
	}
	if err != nil {
		return errors.Join(err, tx.Rollback(context.WithoutCancel(ctx)))
	}
	if err := tx.Commit(ctx); err != nil {
		var pgErr *pgconn.PgError
		var unsent pgx.ErrPreprocessingBatch
		if errors.As(err, &pgErr) || pgconn.SafeToRetry(err) || errors.As(err, &unsent) {
			return err // the server refused it, or it was not sent: nothing applied
		}
		return fmt.Errorf("%w: %w", errCommitUnknown, err)
	}
	return nil
}

// transient reports whether a transaction that failed with err changed
// nothing and may succeed if run again: the connection failed before the
// commit, the server is shutting down or starting, or it chose the
// transaction as the victim of a deadlock or a serialization conflict.
func transient(err error) bool {
	if errors.Is(err, errCommitUnknown) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01", // serialization failure, deadlock
			"57P01", "57P02", "57P03", // admin shutdown (pg_terminate_backend), crash shutdown, cannot connect now
			"08000", "08003", "08006", "08001", "08004": // connection exceptions
			return true
		}
		return false
	}
	// Not the server's answer: the connection failed (or could not be
	// made) while the transaction ran, before its commit.
	var connect *pgconn.ConnectError
	return pgconn.SafeToRetry(err) || errors.As(err, &connect) || pgconn.Timeout(err) || isNetError(err)
}

// isNetError reports whether err is the network's: the connection reset,
// closed or cut.
func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}
