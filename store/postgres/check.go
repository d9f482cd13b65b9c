package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// Check checks the Durabox database url names and reports what it found,
// changing nothing: the schema's version, and the store's invariants
// (sqlstore.CheckInvariants) on a schema of this durabox's version, in one
// read-only transaction that sees one snapshot, so that it may run while
// hosts serve the database. PostgreSQL checksums its own pages (when the
// cluster has data checksums on) and checks its indexes with pg_amcheck,
// which docs/operator.md describes; Check does not repeat them. It returns
// an error only when it could not check: a URL that is wrong, or a server
// that does not answer.
func Check(ctx context.Context, url string) (*store.Check, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: the database URL %q is not one PostgreSQL understands (%v); write it as postgres://user@host:5432/database", redact(url), err)
	}
	cfg.RuntimeParams["application_name"] = "durabox check-db"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: cannot reach the database at %s: %w (is the server running, and the user, database and password right?)", redact(url), err)
	}
	defer conn.Close(ctx)
	c := &store.Check{}
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		st, err := readSchema(ctx, tx)
		if err != nil {
			return err
		}
		switch err := st.refusal(); {
		case st.tables == 0:
			c.Problem("schema %s of the database holds no tables: no Durabox database is there (did the URL name the right database and search_path?)", st.where)
			return nil
		case err != nil:
			c.Problem("%s", strings.TrimPrefix(err.Error(), "postgres: "))
			return nil
		}
		c.Did("the schema's version, %d, in schema %s", st.version, st.where)
		if st.version < schemaVersion {
			c.Did("not the store's invariants, which this durabox checks on its schema version (%d) only: durabox serve migrates the schema to it when it opens it", schemaVersion)
			return nil
		}
		return sqlstore.CheckInvariants(ctx, sqlDB{tx}, c)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: check %s: %w", redact(url), err)
	}
	return c, nil
}
