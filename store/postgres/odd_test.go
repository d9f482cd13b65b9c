package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/internal/oddstore"
	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
)

// TestOddDatabase: a host starts and serves on a PostgreSQL database that
// holds every kind of odd data it can hold (package internal/oddstore).
func TestOddDatabase(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	oddstore.Run(t, oddstore.Backend{
		Open: func(t *testing.T) store.Store {
			s, err := Open(url, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Raw: func(t *testing.T) oddstore.Raw {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close(ctx) })
			// Foreign keys are not checked, as in a database restored
			// in part or edited by hand.
			if _, err := conn.Exec(ctx, `SET session_replication_role = replica`); err != nil {
				t.Fatal(err)
			}
			return rawPostgres{conn}
		},
		Check: func(t *testing.T) *store.Check {
			c, err := Check(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	})
}

// rawPostgres writes a PostgreSQL database as the store never would.
type rawPostgres struct{ conn *pgx.Conn }

func (r rawPostgres) Exec(ctx context.Context, query string, args ...any) error {
	_, err := r.conn.Exec(ctx, query, args...)
	return err
}

func (r rawPostgres) InsertEvent(ctx context.Context, instance string, execution, event int64, kind string, payload []byte) error {
	return r.Exec(ctx, `INSERT INTO history (instance_id, execution_id, event_id, kind, payload) VALUES ($1, $2, $3, $4, $5)`, instance, execution, event, kind, payload)
}

func (r rawPostgres) InsertMessage(ctx context.Context, instance, kind string, payload []byte, visibleAt int64) error {
	return r.Exec(ctx, `INSERT INTO messages (instance_id, kind, payload, visible_at, enqueued_at) VALUES ($1, $2, $3, $4, 0)`, instance, kind, payload, visibleAt)
}
