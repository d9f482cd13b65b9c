package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/storetest"
)

// backlogs are the two sizes each cost is taken at; the larger is ten
// times the smaller.
var backlogs = [2]int{1000, 10000}

// rowsRead returns how many rows PostgreSQL has read from the tables
// (sequential scans) and indexes (entries returned by index and bitmap
// scans) of the schema of url, in all, and by table or index, once every
// store connection has ended: call it after closing the store. A backend
// sends its counts to the server's statistics at times of its own (when
// idle a while, or as it exits); asking each connection to flush them
// (pg_stat_force_next_flush) missed those of connections that were not
// idle in the pool at the time, three quarters of a run's reads in a CI
// run. So it waits until no store backend is left and the counts have
// stopped changing: each exiting backend has flushed its own.
func rowsRead(t *testing.T, url string) (int64, map[string]int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var last int64 = -1
	for {
		var left int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'durabox%'`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, `
			SELECT relname, coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE schemaname = current_schema()
			UNION ALL SELECT indexrelname, idx_tup_read FROM pg_stat_user_indexes WHERE schemaname = current_schema()`)
		if err != nil {
			t.Fatal(err)
		}
		var all int64
		by := map[string]int64{}
		for rows.Next() {
			var name string
			var n int64
			if err := rows.Scan(&name, &n); err != nil {
				t.Fatal(err)
			}
			all, by[name] = all+n, by[name]+n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if left == 0 && all == last {
			return all, by
		}
		last = all
		time.Sleep(100 * time.Millisecond) // backends exiting flush their counts; this decides nothing
	}
}

// neverAnalyzed turns autovacuum off for the store's tables, so that they
// are neither analyzed nor vacuumed while the test counts: what it reads
// depends on its own statements only, planned without statistics, as a
// backlog filled and drained before autovacuum first looks at its tables
// is.
func neverAnalyzed(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	tables, err := s.pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(tables, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if _, err := s.pool.Exec(ctx, `ALTER TABLE `+pgx.Identifier{name}.Sanitize()+` SET (autovacuum_enabled = off)`); err != nil {
			t.Fatal(err)
		}
	}
}

// most names the tables and indexes read most in by, with the rows read
// per item of n, for a failure's message.
func most(by map[string]int64, n int) string {
	names := make([]string, 0, len(by))
	for name := range by {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return by[names[i]] > by[names[j]] })
	var out []string
	for _, name := range names[:min(4, len(names))] {
		out = append(out, fmt.Sprintf("%s %.1f", name, float64(by[name])/float64(n)))
	}
	return strings.Join(out, ", ")
}

// TestBacklogCostsPerItem: one instance's backlog of activities, of
// children and of raised events (storetest.Backlogs) costs PostgreSQL
// the same per item at 10,000 as at 1,000, counted in the rows it reads
// from the store's tables and indexes: queuing them, taking them
// (leasing the tasks, starting the children), finishing them, and the
// instance's turns that take their results. Each runs on tables never
// analyzed, as a backlog filled and drained before autovacuum first
// looks at them is: the store's queries must not need statistics to stop
// at their LIMIT. Each backlog runs on a PostgreSQL cluster of its own,
// with no other session: a walk of an index passes the entries of
// deleted rows that an earlier walk marked dead, and whether a row is
// dead to all depends on the transactions of every other session on the
// server (a run beside the package's other tests read 17 rows a raised
// event at 1,000 and 39 to 47 at 10,000; alone, 17 and 19).
func TestBacklogCostsPerItem(t *testing.T) {
	t.Parallel()
	pgtest.Server(t)
	for _, b := range storetest.Backlogs {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			c := pgtest.NewCluster(t)
			var costs [2]float64
			var where [2]string
			for i, n := range backlogs {
				url, drop, err := pgtest.NewSchema(c.URL())
				if err != nil {
					t.Fatal(err)
				}
				open := func() *Store {
					s, err := Open(url, Options{})
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
				s := open()
				neverAnalyzed(t, s)
				s.Close()
				before, byBefore := rowsRead(t, url)
				s = open()
				b.Run(t, s, n)
				s.Close()
				after, by := rowsRead(t, url)
				for name := range by {
					by[name] -= byBefore[name]
				}
				costs[i], where[i] = float64(after-before)/float64(n), most(by, n)
				if err := drop(); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s: %.1f rows read per item of %d (%s), %.1f of %d (%s)", b.Name, costs[0], backlogs[0], where[0], costs[1], backlogs[1], where[1])
			if costs[0] <= 0 || costs[1] > storetest.BacklogGrowth*costs[0] {
				t.Errorf("%s: PostgreSQL read %.1f rows per item of a backlog of %d and %.1f of %d: more than %.1f times as many; something reads all of it for each item. Most read, per item: %s at %d; %s at %d",
					b.Name, costs[0], backlogs[0], costs[1], backlogs[1], storetest.BacklogGrowth, where[0], backlogs[0], where[1], backlogs[1])
			}
		})
	}
}

// TestStatusCostsTheSameAtAnyLength: an instance's executions with their
// lengths (what a status and each answer of a wait through the API read)
// cost PostgreSQL the same rows for a history of 10,000 events as for one
// of 1,000. Planned as a hash join of the executions with every event of
// the instance, each event's row looked up again, they read all of it: 45
// ms for 2,002 events, read after each step of a sequence that a client
// waits on (BENCHMARKS.md, 2026-11-28, 03:01 to 03:13).
func TestStatusCostsTheSameAtAnyLength(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t)
	ctx := context.Background()
	var costs [2]float64
	for i, n := range backlogs {
		url, drop, err := pgtest.NewSchema(c.URL())
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		storetest.Begin(t, s, "long", func(c *store.TurnCommit) {
			for id := int64(2); id <= int64(n); id++ {
				c.NewEvents = append(c.NewEvents, engine.Event{ID: id, Kind: engine.ExternalEvent, Name: "E", Input: json.RawMessage(`1`), Time: c.Now})
			}
		})
		s.Close()
		before, _ := rowsRead(t, url)
		if s, err = Open(url, Options{}); err != nil {
			t.Fatal(err)
		}
		xs, err := s.Executions(ctx, "long")
		if err != nil || len(xs) != 1 || xs[0].Events != int64(n) {
			t.Fatalf("Executions = %+v, %v; want one of %d events", xs, err, n)
		}
		s.Close()
		after, by := rowsRead(t, url)
		costs[i] = float64(after - before)
		t.Logf("%d events: %.0f rows read (%s)", n, costs[i], most(by, 1))
		if err := drop(); err != nil {
			t.Fatal(err)
		}
	}
	if costs[0] <= 0 || costs[1] > storetest.BacklogGrowth*costs[0] {
		t.Errorf("the executions of a history of %d events read %.0f rows, of %d, %.0f: more than %.1f times as many; something reads all of it",
			backlogs[0], costs[0], backlogs[1], costs[1], storetest.BacklogGrowth)
	}
}
