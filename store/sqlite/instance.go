package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// CreateInstance creates a Pending instance in execution 1, on n.ModuleHash,
// with its OrchestrationStarted message, atomically. It returns an error
// wrapping store.ErrInstanceExists if the id is taken, or store.ErrNotFound
// if the module is not deployed.
func (s *Store) CreateInstance(ctx context.Context, n store.NewInstance) error {
	err := s.write(ctx, func(ctx context.Context, tx txConn) error {
		return s.insertInstance(ctx, tx, n, sqlstore.VisibleToStart, nil, nil)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create instance %q: %w", n.ID, err)
	}
	return nil
}

// insertInstance creates a Pending instance in execution 1 with its
// OrchestrationStarted message, visible at visible; a child when parent is
// not nil, which reports its end to the parent's event parentSchedule
// unless that is nil. It returns an error wrapping store.ErrInstanceExists
// if the id is taken, or store.ErrNotFound if the module is not deployed.
// Its first delivery is counted in advance, by the store's run (locks.go).
func (s *Store) insertInstance(ctx context.Context, tx txConn, n store.NewInstance, visible int64, parent, parentSchedule any) error {
	res, err := tx.ExecContext(ctx, `
		INSERT INTO instances (id, name, module_hash, execution_id, status, input, created_at, updated_at, parent_id, parent_schedule_id, attempt, counted_run)
		SELECT ?, ?, hash, 1, ?, ?, ?, ?, ?, ?, 1, ? FROM modules WHERE hash = ?
		ON CONFLICT (id) DO NOTHING`,
		n.ID, n.Name, string(engine.StatusPending), sqlstore.NullIfEmpty(n.Input), sqlstore.Nanos(n.Now), sqlstore.Nanos(n.Now), parent, parentSchedule, s.run, n.ModuleHash)
	if err != nil {
		return err
	}
	if inserted, err := res.RowsAffected(); err != nil || inserted == 0 {
		return errors.Join(err, whyNotInserted(ctx, tx, n))
	}
	_, err = s.enqueue(ctx, tx, n.ID, engine.StartMessage(n.ID, n.Name, n.Input), visible, n.Now)
	return err
}

// whyNotInserted says why insertInstance inserted nothing.
func whyNotInserted(ctx context.Context, tx txConn, n store.NewInstance) error {
	var taken bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM instances WHERE id = ?)`, n.ID).Scan(&taken); err != nil {
		return err
	}
	if taken {
		return store.ErrInstanceExists
	}
	return fmt.Errorf("module %s %w", n.ModuleHash, store.ErrNotFound)
}

// summaryColumns are the columns scanSummary reads; instanceColumns,
// those scanInstance reads.
const (
	summaryColumns  = `id, name, module_hash, execution_id, status, custom_status, coalesce(parent_id, ''), created_at, updated_at`
	instanceColumns = summaryColumns + `, input, result, failure`
)

type scanner interface{ Scan(dest ...any) error }

// scanSummary scans summaryColumns, and then the columns that follow into
// extra.
func scanSummary(row scanner, extra ...any) (store.InstanceSummary, error) {
	var i store.InstanceSummary
	var created, updated int64
	dest := append([]any{&i.ID, &i.Name, &i.ModuleHash, &i.ExecutionID, &i.Status, &i.CustomStatus, &i.ParentID, &created, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return i, err
	}
	i.CreatedAt, i.UpdatedAt = sqlstore.FromNanos(created), sqlstore.FromNanos(updated)
	return i, nil
}

// scanInstance scans instanceColumns, and then the columns that follow
// into extra.
func scanInstance(row scanner, extra ...any) (store.Instance, error) {
	var input, result []byte
	var failure *string
	sum, err := scanSummary(row, append([]any{&input, &result, &failure}, extra...)...)
	if err != nil {
		return store.Instance{}, err
	}
	i := store.Instance{ID: sum.ID, Name: sum.Name, ModuleHash: sum.ModuleHash, ExecutionID: sum.ExecutionID, Status: sum.Status,
		Input: input, Result: result, CustomStatus: sum.CustomStatus, ParentID: sum.ParentID, CreatedAt: sum.CreatedAt, UpdatedAt: sum.UpdatedAt}
	i.Failure = sqlstore.DecodeFailure(failure)
	return i, nil
}

// GetInstance returns an instance, or an error wrapping store.ErrNotFound.
func (s *Store) GetInstance(ctx context.Context, id string) (store.Instance, error) {
	return getInstance(ctx, s.readers, id)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getInstance(ctx context.Context, q querier, id string) (store.Instance, error) {
	inst, err := scanInstance(q.QueryRowContext(ctx, `SELECT `+instanceColumns+` FROM instances WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return inst, fmt.Errorf("sqlite: instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return inst, fmt.Errorf("sqlite: get instance %q: %w", id, err)
	}
	return inst, nil
}

// History returns the history of one execution of an instance (0 means the
// current one), in order, or an error wrapping store.ErrNotFound if the
// instance does not exist. An execution that never ran has no events.
func (s *Store) History(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	var current int64
	err := s.readers.QueryRowContext(ctx, `SELECT execution_id FROM instances WHERE id = ?`, id).Scan(&current)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	execution, err = sqlstore.HistoryExecution(id, execution, current)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	events, err := history(ctx, s.readers, id, execution)
	if err != nil {
		return nil, err
	}
	if err := sqlstore.HistoryKept(id, execution, current, events); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return events, nil
}

// history reads the events of one execution, in order. A long one is read
// in two halves at once, on two read connections (sqlite3 steps a query
// on the calling thread, so one query uses one CPU): each half is decoded
// into its place in one list.
func history(ctx context.Context, q querier, id string, execution int64) ([]engine.Event, error) {
	// Ids run from 1 without gaps, so the last one (a seek in the primary
	// key) is how many rows to expect; a commit between the two queries
	// only makes the guess short. Every row is read, those of a damaged
	// or edited history below 1 too, so that the engine sees them and
	// refuses the history as corrupt.
	var last int64
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(event_id), 0) FROM history WHERE instance_id = ? AND execution_id = ?`, id, execution).Scan(&last); err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	out := sqlstore.EventsFor(int(last))
	if last < halvedHistory || last > int64(cap(out)) {
		return events(ctx, q, id, execution, math.MinInt64, math.MaxInt64, out)
	}
	half := last / 2
	var first []engine.Event
	var firstErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		first, firstErr = events(ctx, q, id, execution, math.MinInt64, half, out[:0:half])
	}()
	second, err := events(ctx, q, id, execution, half, math.MaxInt64, out[half:half])
	<-done
	if err = errors.Join(firstErr, err); err != nil {
		return nil, err
	}
	// The events of an execution are only ever appended, and deleted all
	// at once (a purge). The halves hold the history of one moment if the
	// first is whole and the second holds at least what the guess saw
	// (had a purge come between, it would be empty); anything else reads
	// it again, in one query.
	if len(first) != int(half) || len(second) < int(last-half) {
		return events(ctx, q, id, execution, math.MinInt64, math.MaxInt64, out[:0])
	}
	if int64(len(second)) > last-half {
		// Commits since the guess outgrew the list: the second half was
		// appended to a list of its own.
		return append(out[:half], second...), nil
	}
	return out[:last], nil
}

// halvedHistory is the length from which history reads a history in two
// halves at once.
const halvedHistory = 4096

// events appends to out the events of one execution after event after,
// up to event upTo.
func events(ctx context.Context, q querier, id string, execution, after, upTo int64, out []engine.Event) ([]engine.Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT event_id, payload FROM history WHERE instance_id = ? AND execution_id = ? AND event_id > ? AND event_id <= ? ORDER BY event_id`,
		id, execution, after, upTo)
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	defer rows.Close()
	out, err = sqlstore.Events[sql.RawBytes](rows, out)
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	return out, nil
}

// Enqueue adds a message for an instance at now, visible at once. It
// returns an error wrapping store.ErrNotFound if the instance does not
// exist, or store.ErrFinished if it has finished.
func (s *Store) Enqueue(ctx context.Context, instanceID string, ev engine.Event, now time.Time) error {
	return s.enqueueFor(ctx, instanceID, ev, 0, now)
}

// EnqueuePersistent adds a persistent event for an instance, visible at
// once, unless its current execution has taken and has waiting max
// persistent events between them: then it returns an error wrapping
// store.ErrTooManyEvents. It returns store.ErrNotFound and
// store.ErrFinished as Enqueue does.
func (s *Store) EnqueuePersistent(ctx context.Context, instanceID string, ev engine.Event, max int, now time.Time) error {
	if err := sqlstore.CheckPersistent(ev, max); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return s.enqueueFor(ctx, instanceID, ev, max, now)
}

// enqueueFor adds a message at now for an instance that has not finished;
// with max > 0, a persistent event within max.
func (s *Store) enqueueFor(ctx context.Context, id string, ev engine.Event, max int, now time.Time) error {
	err := s.write(ctx, func(ctx context.Context, tx txConn) error {
		return sqlstore.EnqueueFor(ctx, writeTx{tx, s}, id, ev, max, now)
	})
	if err != nil {
		return fmt.Errorf("sqlite: enqueue for %q: %w", id, err)
	}
	return nil
}

func (t writeTx) Persistence(ctx context.Context, id string) (engine.Status, int, error) {
	var status engine.Status
	var taken int
	err := t.tx.QueryRowContext(ctx, `SELECT status, persistent_taken FROM instances WHERE id = ?`, id).Scan(&status, &taken)
	if errors.Is(err, sql.ErrNoRows) {
		return status, taken, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	return status, taken, err
}

func (t writeTx) PersistentWaiting(ctx context.Context, id string) (int, error) {
	var waiting int
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE instance_id = ? AND json_extract(payload, '$.kind') = ?`,
		id, string(engine.ExternalEventPersistent)).Scan(&waiting)
	return waiting, err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// enqueue adds a message for an instance, visible from visibleAt (Unix
// nanoseconds), stored at now, and reports whether the instance exists;
// if it does not, the message is dropped. It counts the message in
// s.first (first.go).
func (s *Store) enqueue(ctx context.Context, db execer, instanceID string, ev engine.Event, visibleAt int64, now time.Time) (bool, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, fmt.Errorf("encode %s message: %w", ev.Kind, err)
	}
	res, err := db.ExecContext(ctx, `INSERT INTO messages (instance_id, payload, visible_at, enqueued_at) SELECT id, ?, ?, ? FROM instances WHERE id = ?`,
		payload, visibleAt, sqlstore.Nanos(now), instanceID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	s.first.changed(n)
	return n == 1, err
}
