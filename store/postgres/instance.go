package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// CreateInstance creates a Pending instance in execution 1, on n.ModuleHash,
// with its OrchestrationStarted message, atomically. It returns an error
// wrapping store.ErrInstanceExists if the id is taken, or store.ErrNotFound
// if the module is not deployed.
func (s *Store) CreateInstance(ctx context.Context, n store.NewInstance) error {
	err := s.write(ctx, func(tx pgx.Tx) error { return insertInstance(ctx, tx, n, sqlstore.VisibleToStart, nil, nil) })
	if err != nil {
		return fmt.Errorf("postgres: create instance %q: %w", n.ID, err)
	}
	return nil
}

// insertInstance creates a Pending instance in execution 1 with its
// OrchestrationStarted message, visible at visible; a child when parent is
// not nil, which reports its end to the parent's event parentSchedule
// unless that is nil.
func insertInstance(ctx context.Context, tx pgx.Tx, n store.NewInstance, visible int64, parent *string, parentSchedule *int64) error {
	tag, err := tx.Exec(ctx, `
		INSERT INTO instances (id, name, module_hash, execution_id, status, input, created_at, updated_at, parent_id, parent_schedule_id)
		SELECT $1, $2, hash, 1, $3, $4, $5, $5, $6, $7 FROM modules WHERE hash = $8
		ON CONFLICT (id) DO NOTHING`,
		n.ID, n.Name, string(engine.StatusPending), sqlstore.NullIfEmpty(n.Input), sqlstore.Nanos(n.Now), parent, parentSchedule, n.ModuleHash)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM instances WHERE id = $1)`, n.ID).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return store.ErrInstanceExists
		}
		return fmt.Errorf("module %s %w", n.ModuleHash, store.ErrNotFound)
	}
	_, err = enqueue(ctx, tx, n.ID, engine.StartMessage(n.ID, n.Name, n.Input), visible, n.Now)
	return err
}

// summaryColumns are the columns scanSummary reads; instanceColumns,
// those scanInstance reads.
const (
	summaryColumns  = `id, name, module_hash, execution_id, status, custom_status, coalesce(parent_id, ''), created_at, updated_at`
	instanceColumns = summaryColumns + `, input, result, failure`
)

// scanSummary scans summaryColumns, and then the columns that follow into
// extra.
func scanSummary(row pgx.Row, extra ...any) (store.InstanceSummary, error) {
	var i store.InstanceSummary
	var created, updated int64
	var status string
	dest := append([]any{&i.ID, &i.Name, &i.ModuleHash, &i.ExecutionID, &status, &i.CustomStatus, &i.ParentID, &created, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return i, err
	}
	i.Status, i.CreatedAt, i.UpdatedAt = engine.Status(status), sqlstore.FromNanos(created), sqlstore.FromNanos(updated)
	return i, nil
}

// scanInstance scans instanceColumns, and then the columns that follow
// into extra.
func scanInstance(row pgx.Row, extra ...any) (store.Instance, error) {
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
	var inst store.Instance
	err := s.read(ctx, func(q db) (err error) {
		inst, err = scanInstance(q.QueryRow(ctx, `SELECT `+instanceColumns+` FROM instances WHERE id = $1`, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return inst, fmt.Errorf("postgres: instance %q %w", id, store.ErrNotFound)
	}
	if err != nil {
		return inst, fmt.Errorf("postgres: get instance %q: %w", id, err)
	}
	return inst, nil
}

// currentExecution returns the instance's current execution, or an error
// wrapping store.ErrNotFound.
func currentExecution(ctx context.Context, q db, id string) (int64, error) {
	var current int64
	err := q.QueryRow(ctx, `SELECT execution_id FROM instances WHERE id = $1`, id).Scan(&current)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	return current, err
}

// History returns the history of one execution of an instance (0 means the
// current one), in order, or an error wrapping store.ErrNotFound if the
// instance or the execution does not exist, or is no longer kept.
func (s *Store) History(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	var events []engine.Event
	err := s.read(ctx, func(q db) error {
		current, err := currentExecution(ctx, q, id)
		if err != nil {
			return err
		}
		if execution, err = sqlstore.HistoryExecution(id, execution, current); err != nil {
			return err
		}
		if events, err = history(ctx, q, id, execution); err != nil {
			return err
		}
		return sqlstore.HistoryKept(id, execution, current, events)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: history of %q: %w", id, err)
	}
	return events, nil
}

// history reads the events of one execution, in order.
func history(ctx context.Context, q db, id string, execution int64) ([]engine.Event, error) {
	rows, err := q.Query(ctx, `SELECT event_id, payload FROM history WHERE instance_id = $1 AND execution_id = $2 ORDER BY event_id`, id, execution)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return sqlstore.Events[[]byte](rows, nil)
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
// store.ErrTooManyEvents.
func (s *Store) EnqueuePersistent(ctx context.Context, instanceID string, ev engine.Event, max int, now time.Time) error {
	if err := sqlstore.CheckPersistent(ev, max); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return s.enqueueFor(ctx, instanceID, ev, max, now)
}

// enqueueFor adds a message at now for an instance that has not finished;
// with max > 0, a persistent event within max. It locks the instance's
// row, so that two hosts raising at once count each other's.
func (s *Store) enqueueFor(ctx context.Context, id string, ev engine.Event, max int, now time.Time) error {
	err := s.write(ctx, func(tx pgx.Tx) error { return sqlstore.EnqueueFor(ctx, writeTx{tx}, id, ev, max, now) })
	if err != nil {
		return fmt.Errorf("postgres: enqueue for %q: %w", id, err)
	}
	return nil
}

// Persistence locks the instance's row (FOR UPDATE), so that two hosts
// raising at once count each other's events.
func (t writeTx) Persistence(ctx context.Context, id string) (engine.Status, int, error) {
	var status string
	var taken int
	err := t.tx.QueryRow(ctx, `SELECT status, persistent_taken FROM instances WHERE id = $1 FOR UPDATE`, id).Scan(&status, &taken)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	return engine.Status(status), taken, err
}

func (t writeTx) PersistentWaiting(ctx context.Context, id string) (int, error) {
	var waiting int
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM messages WHERE instance_id = $1 AND kind = $2`, id, string(engine.ExternalEventPersistent)).Scan(&waiting)
	return waiting, err
}

// enqueue adds a message for an instance, visible from visibleAt (Unix
// nanoseconds), stored at now, and reports whether the instance exists;
// if it does not, the message is dropped.
func enqueue(ctx context.Context, q db, instanceID string, ev engine.Event, visibleAt int64, now time.Time) (bool, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, fmt.Errorf("encode %s message: %w", ev.Kind, err)
	}
	tag, err := q.Exec(ctx, `INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at) SELECT id, $1, $2, $3, $4 FROM instances WHERE id = $5`,
		string(ev.Kind), payload, visibleAt, sqlstore.Nanos(now), instanceID)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}
