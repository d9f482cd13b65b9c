package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

// Store is a store.Store on one SQLite file.
type Store struct {
	// sqlStore is the operations both SQL stores write once, in SQLite's
	// dialect (dialect.go).
	sqlStore
	dialect *sqlstore.Dialect
	// db is the write connection, used by one writer at a time only
	// (write.go) once the store is open; reads go to readers.
	db      *sql.DB
	readers readPool
	lock    *os.File
	opts    Options
	// run names this run of the store in counted_run (locks.go).
	run int64
	// locks are the instance locks, leases the activity leases (locks.go);
	// results the activity results kept for their instances' next turns
	// (results.go).
	locks   *instanceLocks
	leases  *activityLeases
	results *results
	// first is what the store knows of its earliest visible message
	// (first.go).
	first *firstMessage

	writers writers
	stop    chan struct{}
	closing sync.Once
	// batches counts committed write transactions.
	batches atomic.Int64
	// syncMode is the write connection's PRAGMA synchronous, as the writer
	// last set it.
	syncMode string
	// path is the database file; full is set once a write fails for a
	// full disk, until Ping finds space on it (full.go); failed is set
	// once the disk fails a write, until Ping writes (diskfailed.go).
	path   string
	full   atomic.Bool
	failed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open opens the Durabox database at path, creating it if the file does not
// exist or is empty. It fails if another Store holds the file, in this
// process or another.
func Open(path string, opts Options) (*Store, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	lock, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, lock: lock, opts: opts, run: newRun(), locks: newInstanceLocks(), leases: newActivityLeases(), results: newResults(), first: newFirstMessage(), stop: make(chan struct{})}
	s.writers.idle = sync.NewCond(&s.writers.mu)
	s.dialect = s.newDialect()
	s.sqlStore = s.shared()
	if err := s.open(path); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) open(path string) error {
	if err := checkHeader(path); err != nil {
		return err
	}
	if _, problems, err := checkFile(path); err != nil || len(problems) > 0 {
		return errors.Join(err, damagedIf(path, problems))
	}
	// SQLite gives the -wal and -shm files the mode of the database file:
	// create it for its owner alone, as it holds the modules' secrets.
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	f.Close()
	register()
	db, err := sql.Open(driverName, dsn(path, s.opts.Durability, false))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// One write connection: SQLite has one writer anyway, and the
	// connection's settings and cache of prepared statements stay for the
	// life of the store.
	db.SetMaxOpenConns(1)
	s.db, s.syncMode = db, s.opts.Durability.synchronous()
	if err := s.prepareSchema(path); err != nil {
		return err
	}
	var waitsUntil int64
	if err := db.QueryRow(`SELECT coalesce(max(visible_at), 0) FROM activity_tasks`).Scan(&waitsUntil); err != nil {
		return fmt.Errorf("sqlite: open %s: read when the tasks that wait for a retry are due: %w", path, err)
	}
	s.leases.waitUntil(waitsUntil)
	// Readers see the last commit, in WAL mode without waiting for the
	// writer.
	if s.readers.DB, err = sql.Open(driverName, dsn(path, s.opts.Durability, true)); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	s.readers.SetMaxOpenConns(maxReaders)
	s.readers.SetMaxIdleConns(maxReaders)
	return nil
}

// maxReaders bounds the read connections.
const maxReaders = 4

// readPool is the read connections. A read runs detached from its
// context's cancellation, once the context has been checked: database/sql
// starts a goroutine to watch the context of every query that can be
// cancelled, which cost the store's reads, each microseconds long, more CPU
// than the query (RATIONALE, "Why does the SQLite store begin its
// transactions itself?"). A read a caller gave up on runs to its end, and
// nothing waits for it.
type readPool struct{ *sql.DB }

func (r readPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.DB.QueryContext(context.WithoutCancel(ctx), query, args...)
}

func (r readPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if ctx.Err() == nil {
		ctx = context.WithoutCancel(ctx)
	}
	// A cancelled ctx gives a row whose Scan returns its error.
	return r.DB.QueryRowContext(ctx, query, args...)
}

// begin begins a read transaction on one of the connections, in which
// every query sees the same commit; the caller ends it with the function
// it returns.
func (r readPool) begin(ctx context.Context) (txConn, func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	ctx = context.WithoutCancel(ctx)
	c, err := r.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.ExecContext(ctx, sqlBegin); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, func() {
		// A read has nothing to undo, and a failed rollback leaves no
		// connection in a transaction (rollback discards it).
		_ = rollback(ctx, c)
		c.Close()
	}, nil
}

// dsn names the database file for the driver, with the settings of every
// connection. None of them writes to the file, so they are safe on a file
// Open then refuses.
func dsn(path string, d Durability, readOnly bool) string {
	settings := url.Values{
		"_busy_timeout":    {"5000"}, // milliseconds
		"_fk":              {"1"},
		"_sync":            {d.synchronous()},
		"_txlock":          {"immediate"},
		"_stmt_cache_size": {"64"}, // more than the store has statements
	}
	if readOnly {
		settings.Set("_query_only", "1")
		settings.Set("_txlock", "deferred")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + settings.Encode()
}

// Ping reads the schema's version from the file through a read connection:
// the file is there and readable. Once a write failed for a full disk, it
// returns store.ErrFull until the disk has space again (full.go); once the
// disk failed a write, it writes, and returns store.ErrDiskFailed until
// that succeeds (diskfailed.go). It returns an error once the store is
// closed.
func (s *Store) Ping(ctx context.Context) error {
	select {
	case <-s.stop:
		return errClosed
	default:
	}
	var version int
	if err := s.readers.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return s.writable(ctx)
}

// Close closes the database and releases the file for another host.
// Closing a closed Store does nothing.
func (s *Store) Close() error {
	var err error
	s.closing.Do(func() {
		close(s.stop)
		// The writes queued by now are committed; none is taken after.
		w := &s.writers
		w.mu.Lock()
		w.closed = true
		for w.writing {
			w.idle.Wait()
		}
		w.mu.Unlock()
		// The handles stay set: a reader still running (a host's
		// dispatcher, say) gets database/sql's "database is closed"
		// error from them, not a nil pointer.
		if s.readers.DB != nil {
			err = errors.Join(err, s.readers.Close())
		}
		if s.db != nil {
			err = errors.Join(err, s.db.Close())
		}
		if s.lock != nil {
			err = errors.Join(err, unlockFile(s.lock))
		}
	})
	return err
}
