package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// QueueStats counts the messages, timers, locked instances and activity
// tasks waiting at now, and finds the oldest message and activity task
// ready. It reads every message visible at now: it is for people.
func (s *Store) QueueStats(ctx context.Context, now time.Time) (store.QueueStats, error) {
	var q store.QueueStats
	err := s.read(ctx, func(r db) error {
		var next *int64
		err := r.QueryRow(ctx, `
			SELECT
				(SELECT count(*) FROM messages WHERE visible_at <= $1),
				(SELECT count(DISTINCT instance_id) FROM messages WHERE visible_at <= $1),
				(SELECT count(*) FROM messages WHERE visible_at = $2),
				(SELECT count(*) FROM messages m JOIN instances i ON i.id = m.instance_id WHERE m.visible_at > $1 AND NOT i.`+sqlstore.Finished+`),
				(SELECT min(m.visible_at) FROM messages m JOIN instances i ON i.id = m.instance_id WHERE m.visible_at > $1 AND NOT i.`+sqlstore.Finished+`),
				(SELECT count(*) FROM instances WHERE locked_until > $1),
				(SELECT count(*) FROM activity_tasks WHERE locked_until <= $1 AND visible_at <= $1),
				(SELECT count(*) FROM activity_tasks WHERE locked_until > $1),
				(SELECT count(*) FROM activity_tasks WHERE visible_at > $1)`,
			sqlstore.Nanos(now), sqlstore.VisibleToStart).
			Scan(&q.Ready, &q.ReadyInstances, &q.Starts, &q.Timers, &next, &q.Locked, &q.Activities, &q.Running, &q.Retrying)
		if err != nil {
			return err
		}
		if next != nil {
			q.NextTimer = sqlstore.FromNanos(*next)
		}
		// A timer has waited since it came due; anything else since it was
		// stored.
		q.OldestReady, err = dialect.Oldest(ctx, sqlDB{r}, `
			SELECT instance_id, kind, CASE WHEN visible_at >= $2 THEN visible_at ELSE enqueued_at END AS since
			FROM messages WHERE visible_at <= $1 ORDER BY since, id LIMIT 1`, sqlstore.Nanos(now), sqlstore.FirstDue)
		if err != nil {
			return err
		}
		q.OldestActivity, err = dialect.Oldest(ctx, sqlDB{r}, `
			SELECT instance_id, name, greatest(enqueued_at, visible_at) AS since FROM activity_tasks
			WHERE locked_until <= $1 AND visible_at <= $1 ORDER BY since, id LIMIT 1`, sqlstore.Nanos(now))
		if err != nil {
			return err
		}
		q.Queues, err = sqlstore.QueueCounts(ctx, sqlDB{r}, `
			SELECT queue, count(*) FILTER (WHERE locked_until <= $1 AND visible_at <= $1), count(*) FILTER (WHERE locked_until > $1)
			FROM activity_tasks WHERE queue <> '' GROUP BY queue ORDER BY queue`, sqlstore.Nanos(now))
		return err
	})
	if err != nil {
		return q, fmt.Errorf("postgres: queue stats: %w", err)
	}
	return q, nil
}
