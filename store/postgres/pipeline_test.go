package postgres

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
)

// TestPipelineRoundTrips: a write transaction's statements whose answers
// nothing reads go with the next one read, or with the COMMIT: the round
// trips are those of the answers read, and one for the COMMIT. (Each
// case runs twice on the one connection, and the second is counted: a
// connection's first use of a statement prepares it, a round trip more.)
func TestPipelineRoundTrips(t *testing.T) {
	t.Parallel()
	url, trips := pgtest.CountTrips(t, pgtest.Schema(t))
	s, err := Open(url, Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	insert := `INSERT INTO durabox_meta (key, value) VALUES ($1 || $2, 'x')`
	round := 0
	for _, c := range []struct {
		name string
		fn   func(tx *pipeTx) error
		want int64
	}{
		{"sends only", func(tx *pipeTx) error {
			for _, key := range []string{"a", "b", "c"} {
				if err := tx.Send(insert, key, strconv.Itoa(round)); err != nil {
					return err
				}
			}
			return nil
		}, 1},
		{"a read between", func(tx *pipeTx) error {
			if err := tx.Send(insert, "d", strconv.Itoa(round)); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM durabox_meta WHERE key = 'd' || $1`, strconv.Itoa(round)).Scan(&n); err != nil || n != 1 {
				return errors.Join(err, errors.New("the read does not see the statement sent before it"))
			}
			return tx.Send(insert, "e", strconv.Itoa(round))
		}, 2},
		{"a check", func(tx *pipeTx) error {
			return tx.SendCheck(func(rows pgx.Rows) error { rows.Close(); return rows.Err() }, insert+` RETURNING key`, "f", strconv.Itoa(round))
		}, 2},
		{"nothing", func(*pipeTx) error { return nil }, 0},
	} {
		var before int64
		for round = range 2 {
			before = trips.N()
			if err := s.write(ctx, c.fn); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if got := trips.N() - before; got != c.want {
			t.Errorf("%s: %d round trips; want %d", c.name, got, c.want)
		}
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM durabox_meta WHERE key ~ '^[a-f][01]$'`).Scan(&n); err != nil || n != 12 {
		t.Errorf("%d of the 12 rows written, %v", n, err)
	}
}

// TestPipelineFailsWhole: a statement sent without waiting for its answer
// that fails, or a check that refuses, fails its transaction, and nothing
// of it is applied: not the statements before it, nor those after it,
// nor one a savepoint would undo.
func TestPipelineFailsWhole(t *testing.T) {
	t.Parallel()
	s := openTest(t, Options{})
	ctx := context.Background()
	insert := `INSERT INTO durabox_meta (key, value) VALUES ($1, 'x')`
	refused := errors.New("refused")
	for _, c := range []struct {
		name string
		fn   func(tx *pipeTx) error
		want func(error) bool
	}{
		{"fails with the commit", func(tx *pipeTx) error {
			return errors.Join(tx.Send(insert, "a"), tx.Send(insert, "application"), tx.Send(insert, "b"))
		}, uniqueViolation},
		{"fails before a read", func(tx *pipeTx) error {
			if err := errors.Join(tx.Send(insert, "a"), tx.Send(insert, "application")); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, insert, "b"); !uniqueViolation(err) {
				t.Errorf("the read after a failed statement: %v; want its error", err)
			}
			return nil // as if the caller did not look
		}, uniqueViolation},
		{"fails in a savepoint", func(tx *pipeTx) error {
			if err := tx.Send(insert, "a"); err != nil {
				return err
			}
			err := tx.savepoint(ctx, func(sp *pipeTx) error {
				if err := sp.Send(insert, "application"); err != nil {
					return err
				}
				_, err := sp.Exec(ctx, `SELECT 1`)
				return err
			})
			if !uniqueViolation(err) {
				t.Errorf("the savepoint: %v; want the unique violation", err)
			}
			return nil // the savepoint undoes its own; the failure stays
		}, uniqueViolation},
		{"a check refuses", func(tx *pipeTx) error {
			return errors.Join(tx.Send(insert, "a"),
				tx.SendCheck(func(rows pgx.Rows) error { rows.Close(); return refused }, `SELECT 1`),
				tx.Send(insert, "b"))
		}, func(err error) bool { return errors.Is(err, refused) && !errors.Is(err, store.ErrUnavailable) }},
	} {
		err := s.write(ctx, c.fn)
		if !c.want(err) {
			t.Errorf("%s: %v", c.name, err)
		}
		var n int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM durabox_meta WHERE key IN ('a', 'b')`).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows of the failed transaction applied, %v", c.name, n, err)
		}
	}
}

// uniqueViolation reports whether err is PostgreSQL's unique violation.
func uniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
