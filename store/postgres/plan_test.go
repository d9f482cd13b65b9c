package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/storetest"
)

// backlogLeft fills the queue tables of a schema never analyzed (its
// autovacuum off) as one instance's backlog of 10,000 leaves them nine
// tenths through: 10,000 activity tasks, results and children's starts
// queued, the first 9,000 of each deleted and not vacuumed, and a few
// timers, some due.
func backlogLeft(t *testing.T, s *Store) {
	t.Helper()
	storetest.Begin(t, s, "fan", func(*store.TurnCommit) {})
	for _, statement := range []string{
		`ALTER TABLE activity_tasks SET (autovacuum_enabled = off)`,
		`ALTER TABLE messages SET (autovacuum_enabled = off)`,
		`ALTER TABLE instances SET (autovacuum_enabled = off)`,
		`INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, enqueued_at, fair_rank)
			SELECT 'fan', 1, 'backlog', i, 'A', 0, i FROM generate_series(1, 10000) i`,
		`INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at)
			SELECT 'fan', 'ActivityCompleted', '\x7b7d', 0, 0 FROM generate_series(1, 10000) i`,
		`INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at, fair_rank, parent_id)
			SELECT 'fan', 'OrchestrationStarted', '\x7b7d', 1, 0, i, 'fan' FROM generate_series(1, 10000) i`,
		`INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at)
			SELECT 'fan', 'TimerFired', '\x7b7d', i * 1000, 0 FROM generate_series(1, 20) i`,
		`DELETE FROM activity_tasks WHERE fair_rank <= 9000`,
		`DELETE FROM messages WHERE visible_at IN (0, 1) AND id IN (SELECT id FROM messages WHERE visible_at IN (0, 1) ORDER BY id LIMIT 9000)`,
		`DELETE FROM messages WHERE visible_at = 1 AND fair_rank <= 9000`,
	} {
		if _, err := s.pool.Exec(context.Background(), statement); err != nil {
			t.Fatalf("%s: %v", statement, err)
		}
	}
}

// plan returns PostgreSQL's plan of statement, prepared with the
// parameter types types and run with the arguments args (SQL literals),
// on one of the store's connections: generic, the plan of a prepared
// statement run many times, or custom, planned for args.
func plan(t *testing.T, s *Store, statement, types, args string, generic bool) string {
	t.Helper()
	ctx := context.Background()
	mode := "force_custom_plan"
	if generic {
		mode = "force_generic_plan"
	}
	var lines []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = `+mode+`; PREPARE planned (`+types+`) AS `+statement); err != nil {
			return err
		}
		defer tx.Exec(ctx, `DEALLOCATE planned`)
		rows, err := tx.Query(ctx, `EXPLAIN EXECUTE planned (`+args+`)`)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", statement, err)
	}
	return strings.Join(lines, "\n")
}

// TestQueuePlansWalkIndexes: on a schema never analyzed, left as a large
// backlog leaves it (backlogLeft), each statement that takes work from
// the queues or reads an instance's messages is planned, generic or
// custom, as a walk of the index named, in its order where it has one
// (no Sort), and never as a bitmap scan (which reads every entry its
// condition matches, the deleted rows' too, and stops at no LIMIT) or a
// sequential scan. Planned as they were before, with bitmap scans on, the
// lease, the reads of an instance's messages and the consumption of them
// read every entry the backlog left (TestBacklogCostsPerItem).
func TestQueuePlansWalkIndexes(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	s := openTest(t, Options{})
	backlogLeft(t, s)
	const now = "500000"
	for _, c := range []struct {
		name, statement, types, args string
		want                         []string
		sorted                       bool // the plan may sort (the due timers)
	}{
		{"lease", nextTasks, "text, text, bigint, bigint, int, text[], text, text[]", "'t', 'h', " + now + ", " + now + ", 64, '{}', '', '{}'",
			[]string{"Index Scan using activity_tasks_fair"}, false},
		{"rank", rankQuery, "bigint, text, text", now + ", 'fan', ''",
			[]string{"Index Scan using activity_tasks_fair", "Index Only Scan Backward using activity_tasks_instance_rank"}, false},
		{"begun", begunQuery, "bigint, int, text[], text[]", now + ", 128, '{}', '{}'",
			[]string{"Index Scan using messages_visible", "Index Scan using instances_pkey"}, true},
		{"start", startQuery, "bigint, int, text[], text[]", now + ", 128, '{}', '{}'",
			[]string{"Index Scan using messages_start", "Index Scan using instances_pkey"}, false},
		{"messages", visibleQuery, "text, bigint", "'fan', " + now, []string{"Index Scan using messages_instance"}, false},
		{"has work", hasWorkQuery, "text, bigint", "'fan', " + now, []string{"Index Scan using messages_instance"}, false},
		{"consume", consumeQuery, "text, bigint[]", "'fan', '{19990, 19991}'", []string{"Index Scan using messages_"}, false},
	} {
		for _, generic := range []bool{false, true} {
			name := fmt.Sprintf("%s (generic %v)", c.name, generic)
			text := plan(t, s, c.statement, c.types, c.args, generic)
			t.Logf("%s:\n%s", name, text)
			for _, want := range c.want {
				if !strings.Contains(text, want) {
					t.Errorf("%s: the plan has no %q:\n%s", name, want, text)
				}
			}
			for _, bad := range []string{"Bitmap", "Seq Scan", "Sort"} {
				if strings.Contains(text, bad) && !(bad == "Sort" && c.sorted) {
					t.Errorf("%s: the plan has a %s:\n%s", name, bad, text)
				}
			}
		}
	}
}
