package postgres

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// History returns the history of one execution of an instance (0 means the
// current one), in order, or an error wrapping store.ErrNotFound if the
// instance or the execution does not exist, or is no longer kept.
func (s *Store) History(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	var events []engine.Event
	err := s.read(ctx, func(q db) error {
		current, err := dialect.CurrentExecution(ctx, sqlDB{q}, id)
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
