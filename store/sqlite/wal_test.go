package sqlite

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestWALShrinksAfterALargePurge: a large write and purge while a read
// holds its snapshot (so that no checkpoint can start the WAL over) grows
// the WAL; once the read is done, the store's next writes start it over,
// and it shrinks back to walLimit at most.
func TestWALShrinksAfterALargePurge(t *testing.T) {
	t.Parallel()
	s, path := openTest(t)
	tx, end, err := s.readers.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	payload := strings.Repeat("x", 1<<20)
	for range 2 * walLimit >> 20 {
		exec(t, s, `INSERT INTO messages (instance_id, payload, visible_at) VALUES ('big', ?, 0)`, payload)
	}
	exec(t, s, `DELETE FROM messages WHERE instance_id = 'big'`)
	grown := walSize(t, path)
	if grown <= walLimit {
		t.Fatalf("the WAL is %d bytes with a read holding its snapshot; the test needs it past %d", grown, walLimit)
	}
	end()
	// The first write's commit checkpoints the whole WAL; the second
	// starts it over.
	for range 2 {
		exec(t, s, `INSERT INTO messages (instance_id, payload, visible_at) VALUES ('small', 'x', 0)`)
	}
	if size := walSize(t, path); size > walLimit {
		t.Fatalf("the WAL is %d bytes once checkpointed and started over (%d before); want %d at most", size, grown, walLimit)
	}
}

// exec runs statement with args as a write of its own.
func exec(t *testing.T, s *Store, statement string, args ...any) {
	t.Helper()
	err := s.write(ctx, func(ctx context.Context, tx txConn) error {
		_, err := tx.ExecContext(ctx, statement, args...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
