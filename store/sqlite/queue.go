package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// QueueStats counts the messages, timers, locked instances and activity
// tasks waiting at now, and finds the oldest message and activity task
// ready. It reads every message visible at now: a dashboard's polls can
// afford it, a dispatcher could not.
func (s *Store) QueueStats(ctx context.Context, now time.Time) (store.QueueStats, error) {
	var q store.QueueStats
	var next sql.NullInt64
	held, err := idList(s.leases.held(sqlstore.Nanos(now), false))
	var kept string
	// The activity results kept in memory for their instances
	// (results.go) are ready messages.
	keptIDs, keptResults := s.results.waiting()
	if err == nil {
		kept, err = idList(keptIDs)
	}
	if err != nil {
		return q, fmt.Errorf("sqlite: queue stats: %w", err)
	}
	var alsoWaiting int
	err = s.readers.QueryRowContext(ctx, `
		SELECT
			(SELECT count(*) FROM messages WHERE visible_at <= ?1),
			(SELECT count(DISTINCT instance_id) FROM messages WHERE visible_at <= ?1),
			(SELECT count(*) FROM messages WHERE visible_at = ?2),
			(SELECT count(*) FROM messages m JOIN instances i ON i.id = m.instance_id WHERE m.visible_at > ?1 AND NOT i.`+sqlstore.Finished+`),
			(SELECT min(m.visible_at) FROM messages m JOIN instances i ON i.id = m.instance_id WHERE m.visible_at > ?1 AND NOT i.`+sqlstore.Finished+`),
			(SELECT count(*) FROM activity_tasks WHERE id NOT IN (SELECT value FROM json_each(?3)) AND visible_at <= ?1),
			(SELECT count(*) FROM activity_tasks WHERE visible_at > ?1),
			(SELECT count(DISTINCT instance_id) FROM messages WHERE visible_at <= ?1 AND instance_id IN (SELECT value FROM json_each(?4)))`,
		sqlstore.Nanos(now), sqlstore.VisibleToStart, held, kept).
		Scan(&q.Ready, &q.ReadyInstances, &q.Starts, &q.Timers, &next, &q.Activities, &q.Retrying, &alsoWaiting)
	if err != nil {
		return q, fmt.Errorf("sqlite: queue stats: %w", err)
	}
	q.Ready += keptResults
	q.ReadyInstances += len(keptIDs) - alsoWaiting
	q.Running = s.leases.count(sqlstore.Nanos(now))
	q.Locked = s.locks.count(sqlstore.Nanos(now))
	if next.Valid {
		q.NextTimer = sqlstore.FromNanos(next.Int64)
	}
	// A timer has waited since it came due; anything else since it was
	// stored.
	q.OldestReady, err = s.dialect.Oldest(ctx, sqlDB{s.readers}, `
		SELECT instance_id, json_extract(payload, '$.kind'), iif(visible_at >= ?2, visible_at, enqueued_at) AS since
		FROM messages WHERE visible_at <= ?1 ORDER BY since, id LIMIT 1`, sqlstore.Nanos(now), sqlstore.FirstDue)
	if id, at, ok := s.results.oldest(); err == nil && ok && (q.OldestReady == nil || at < sqlstore.Nanos(q.OldestReady.Since)) {
		q.OldestReady = &store.WaitingItem{InstanceID: id, What: string(engine.ActivityCompleted), Since: sqlstore.FromNanos(at)}
	}
	if err == nil {
		q.OldestActivity, err = s.dialect.Oldest(ctx, sqlDB{s.readers}, `
			SELECT instance_id, name, max(enqueued_at, visible_at) AS since FROM activity_tasks
			WHERE id NOT IN (SELECT value FROM json_each(?1)) AND visible_at <= ?2 ORDER BY since, id LIMIT 1`, held, sqlstore.Nanos(now))
	}
	if err == nil {
		q.Queues, err = sqlstore.QueueCounts(ctx, sqlDB{s.readers}, `
			SELECT queue, sum(id NOT IN (SELECT value FROM json_each(?1))), sum(id IN (SELECT value FROM json_each(?1)))
			FROM activity_tasks WHERE queue != '' GROUP BY queue ORDER BY queue`, held)
	}
	if err != nil {
		return q, fmt.Errorf("sqlite: queue stats: %w", err)
	}
	return q, nil
}
