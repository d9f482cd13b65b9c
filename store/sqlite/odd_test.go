package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/durabox/durabox/internal/oddstore"
	"github.com/durabox/durabox/store"
)

// TestOddDatabase: a host starts and serves on a SQLite file that holds
// every kind of odd data (package internal/oddstore).
func TestOddDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "durabox.db")
	oddstore.Run(t, oddstore.Backend{
		Open: func(t *testing.T) store.Store {
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Raw: func(t *testing.T) oddstore.Raw {
			db, err := sql.Open("sqlite3", path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return rawSQLite{db}
		},
		Check: func(t *testing.T) *store.Check {
			c, err := Check(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	})
	checkIntegrity(t, path)
}

// rawSQLite writes a SQLite file as the store never would.
type rawSQLite struct{ db *sql.DB }

func (r rawSQLite) Exec(ctx context.Context, query string, args ...any) error {
	_, err := r.db.ExecContext(ctx, query, args...)
	return err
}

func (r rawSQLite) InsertEvent(ctx context.Context, instance string, execution, event int64, _ string, payload []byte) error {
	return r.Exec(ctx, `INSERT INTO history (instance_id, execution_id, event_id, payload) VALUES ($1, $2, $3, $4)`, instance, execution, event, payload)
}

func (r rawSQLite) InsertMessage(ctx context.Context, instance, _ string, payload []byte, visibleAt int64) error {
	return r.Exec(ctx, `INSERT INTO messages (instance_id, payload, visible_at, enqueued_at) VALUES ($1, $2, $3, 0)`, instance, payload, visibleAt)
}
