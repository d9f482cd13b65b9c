package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
)

// TestTransactionStatementsPreparedOnce: the write connection runs the
// statements that begin and end a batch and a write's savepoint prepared,
// the same ones batch after batch, and a read connection its read
// transaction's (driver.go).
func TestTransactionStatementsPreparedOnce(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	prepared := func(db *sql.DB) map[string]driver.Stmt {
		t.Helper()
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var m map[string]driver.Stmt
		if err := c.Raw(func(dc any) error { m = maps.Clone(dc.(*conn).prepared); return nil }); err != nil {
			t.Fatal(err)
		}
		return m
	}
	check := func(name string, m map[string]driver.Stmt, want ...string) {
		t.Helper()
		for _, q := range want {
			if m[q] == nil {
				t.Errorf("the %s connection has no %s prepared", name, q)
			}
		}
	}

	// batch commits two writes in one batch, each in a savepoint, the
	// second of which fails: a write of its own holds the writer until
	// both are queued.
	round := 0
	batch := func() {
		t.Helper()
		round++
		release := holdWriter(s)
		fail := errors.New("fails")
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				errs[i] = s.write(ctx, func(ctx context.Context, tx txConn) error {
					if _, err := tx.ExecContext(ctx, `INSERT INTO orchestration_modules (name, hash) VALUES (?, 'h1')`, fmt.Sprint("O", round, i)); err != nil || i == 0 {
						return err
					}
					return fail
				})
			})
		}
		waitQueued(s, len(errs))
		err := release()
		wg.Wait()
		if err != nil || errs[0] != nil || !errors.Is(errs[1], fail) {
			t.Fatalf("the batch's writes returned %v, %v and %v; want nil, nil and %v", err, errs[0], errs[1], fail)
		}
	}

	withInstance(t, s)
	batch()
	writes := prepared(s.db)
	check("write", writes, sqlBeginImmediate, sqlSavepoint, sqlRelease, sqlRollbackTo, sqlCommit)
	lock(t, s, t0)
	reads := prepared(s.readers.DB)
	check("read", reads, sqlBegin, sqlRollback)

	create(t, s, "i2")
	batch()
	lock(t, s, t0)
	if again := prepared(s.db); !maps.Equal(again, writes) {
		t.Errorf("the write connection prepared its statements again: %v, then %v", writes, again)
	}
	if again := prepared(s.readers.DB); !maps.Equal(again, reads) {
		t.Errorf("the read connection prepared its statements again: %v, then %v", reads, again)
	}
}

// TestStatementJournalInMemory: the write connection keeps its temporary
// files, the statement journal among them, in memory, and a read connection
// keeps the default (driver.go).
func TestStatementJournalInMemory(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	for name, c := range map[string]struct {
		db   *sql.DB
		want int
	}{"write": {s.db, 2}, "read": {s.readers.DB, 0}} {
		var got int
		if err := c.db.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("the %s connection has temp_store = %d, want %d", name, got, c.want)
		}
	}
}
