package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/durabox/durabox/store"
)

// Store is a store.Store on a PostgreSQL database, which several hosts
// may share.
type Store struct {
	// sqlStore is the operations both SQL stores write once.
	sqlStore
	pool *pgxpool.Pool
	opts Options
	// where is the database schema the store uses (for messages).
	where  string
	closed atomic.Bool
	// announcer tells the other hosts of the work commits make, and
	// listening says whether Watch listens (watch.go).
	announcer announcer
	listening atomic.Bool
}

var _ store.Store = (*Store)(nil)

// errClosed is returned after Close.
var errClosed = errors.New("postgres: the store is closed")

// Open connects to the PostgreSQL database url names (a postgres:// URL
// or a "key=value" connection string; search_path in it chooses the
// database schema) and prepares the Durabox schema in it: created in an
// empty schema, migrated in an older one. It refuses a schema that holds
// other tables, or a newer Durabox's, without changing it. It fails with an
// error that says what to do when the URL is wrong or the server does not
// answer within Options.ConnectTimeout.
func Open(url string, opts Options) (*Store, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: the database URL %q is not one PostgreSQL understands (%v); write it as postgres://user@host:5432/database", redact(url), err)
	}
	cfg.MaxConns = int32(opts.MaxConns)
	// An operator sees which host each connection is (pg_stat_activity).
	cfg.ConnConfig.RuntimeParams["application_name"] = "durabox " + opts.HostID
	cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	cfg.ConnConfig.DialFunc = dialer().DialContext
	for _, settings := range []map[string]string{serverSideDeadConnection, plannerSettings} {
		for name, value := range settings {
			cfg.ConnConfig.RuntimeParams[name] = value
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.ConnectTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", redact(url), err)
	}
	s := &Store{pool: pool, opts: opts}
	s.sqlStore = s.shared()
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: cannot reach the database at %s: %w (is the server running, and the user, database and password right?)", redact(url), err)
	}
	// Preparing the schema is one transaction that finds what is there
	// and brings it to this version, so a connection lost during it (a
	// crash test's cut, a server restarting) is tried again, as a write is.
	if err := s.retry(ctx, func() error { return s.prepareSchema(ctx) }); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// redact hides the password of a database URL, for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if strings.Contains(raw, "password") {
			return "(the connection string)"
		}
		return raw
	}
	return u.Redacted()
}

// write runs fn in a transaction and commits it, telling OnCommit. fn may
// run more than once: when the server ends the transaction for a
// serialization failure or a deadlock, or the connection drops before the
// commit was sent, it runs again on a fresh transaction.
func (s *Store) write(ctx context.Context, fn func(tx *pipeTx) error) error {
	return s.commit(ctx, func(tx *pipeTx) (bool, error) { return false, fn(tx) })
}

// writeUnsynced is write for a lease, an activity result or an audit
// record, which commits without waiting for the server to flush its WAL
// (synchronous_commit off for the transaction), as store/sqlite's skip
// the sync: a server crash may lose it, and losing it loses nothing
// acknowledged (a lease ends early, fenced by its token; an activity runs
// again, which at-least-once allows; an audit record is written after its
// change was answered). The WAL is sequential, so the next
// synced commit flushes it with its own.
func (s *Store) writeUnsynced(ctx context.Context, fn func(tx *pipeTx) error) error {
	return s.commit(ctx, func(tx *pipeTx) (bool, error) {
		if err := unsynced(ctx, tx); err != nil {
			return true, err
		}
		return true, fn(tx)
	})
}

// writeAnnouncing is writeUnsynced that announces kind once it has
// committed (watch.go).
func (s *Store) writeAnnouncing(ctx context.Context, kind string, fn func(tx *pipeTx) error) error {
	if err := s.writeUnsynced(ctx, fn); err != nil {
		return err
	}
	s.announce(kind)
	return nil
}

// commit runs fn in a transaction and commits it, as write says, and
// tells OnCommit whether fn made it commit unsynced (unsynced).
func (s *Store) commit(ctx context.Context, fn func(tx *pipeTx) (unsynced bool, err error)) error {
	if s.closed.Load() {
		return errClosed
	}
	began := time.Now()
	unsynced := false
	err := s.retry(ctx, func() error {
		return s.inTx(ctx, func(tx *pipeTx) (err error) {
			unsynced, err = fn(tx)
			return err
		})
	})
	if s.opts.OnCommit != nil {
		s.opts.OnCommit(store.CommitStats{Writes: 1, Unsynced: unsynced, Duration: time.Since(began), Err: err})
	}
	return err
}

// Ping reads from the database. It returns an error once the store is
// closed.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return errClosed
	}
	var one int
	if err := s.pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Close closes the store's connections. Closing a closed Store does
// nothing.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.announcer.stop()
	s.pool.Close()
	return nil
}
