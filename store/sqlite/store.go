package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver

	"github.com/durabox/durabox/store"
)

// Store is a store.Store on one SQLite file.
type Store struct {
	db   *sql.DB
	lock *os.File
	opts Options
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
	s := &Store{lock: lock, opts: opts}
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
	db, err := sql.Open("sqlite3", dsn(path, s.opts.Durability))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, the settings of the
	// connection stay in force for the life of the store, and its cache of
	// prepared statements serves every query.
	db.SetMaxOpenConns(1)
	s.db = db
	return s.prepareSchema(path)
}

// dsn names the database file for the driver, with the settings of every
// connection. None of them writes to the file, so they are safe on a file
// Open then refuses.
func dsn(path string, d Durability) string {
	settings := url.Values{
		"_busy_timeout":    {"5000"}, // milliseconds
		"_fk":              {"1"},
		"_sync":            {d.synchronous()},
		"_txlock":          {"immediate"},
		"_stmt_cache_size": {"64"}, // more than the store has statements
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + settings.Encode()
}

// Close closes the database and releases the file for another host.
// Closing a closed Store does nothing.
func (s *Store) Close() error {
	var err error
	if s.db != nil {
		err = s.db.Close()
	}
	if s.lock != nil {
		err = errors.Join(err, unlockFile(s.lock))
		s.lock = nil
	}
	return err
}
