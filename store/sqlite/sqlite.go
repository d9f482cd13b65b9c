// Package sqlite is the default Durabox store: one SQLite file in WAL mode,
// with every turn committed in one transaction.
//
// The file belongs to one host at a time: Open takes an exclusive lock on a
// file beside it (FILE.lock) and a second Open fails, naming the process
// that holds it. The database identifies itself with an application id and
// records its schema version; Open refuses files that are not SQLite, SQLite
// files that are not Durabox databases, and databases from a newer Durabox,
// without modifying them.
package sqlite

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver

	"github.com/durabox/durabox/store"
)

// Durability says what a commit waits for.
type Durability string

const (
	// DurabilityFull (the default): a commit returns once it is on disk;
	// a power cut loses nothing acknowledged. PRAGMA synchronous=FULL.
	DurabilityFull Durability = "full"
	// DurabilityNormal: a commit returns once it is in the WAL file; a
	// power cut (not a process crash) may lose the last commits.
	// PRAGMA synchronous=NORMAL.
	DurabilityNormal Durability = "normal"
)

// Options configures a Store. The zero value means defaults.
type Options struct {
	// Durability defaults to DurabilityFull.
	Durability Durability
	// Logger receives the store's logs. Nil discards.
	Logger *slog.Logger
}

func (o *Options) validate() error {
	switch o.Durability {
	case "":
		o.Durability = DurabilityFull
	case DurabilityFull, DurabilityNormal:
	default:
		return fmt.Errorf("sqlite: durability %q is not one of full, normal", o.Durability)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

// Store is a store.Store on one SQLite file.
type Store struct {
	db   *sql.DB
	lock *os.File
	opts Options
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the Durabox database at path.
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
	sync := "FULL"
	if s.opts.Durability == DurabilityNormal {
		sync = "NORMAL"
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_fk=1&_txlock=immediate&_sync="+sync)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and the pragmas set
	// below stay in force for the life of the store.
	db.SetMaxOpenConns(1)
	s.db = db
	return s.prepareSchema(path)
}

func (s *Store) Close() error {
	var err error
	if s.db != nil {
		err = s.db.Close()
	}
	if s.lock != nil {
		os.Remove(s.lock.Name())
		err = errors.Join(err, s.lock.Close())
	}
	return err
}

// lockFile takes the exclusive lock that makes one host per database file.
func lockFile(path string) (*os.File, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(f)
		f.Close()
		pid := strings.TrimSpace(string(holder))
		if _, perr := strconv.Atoi(pid); perr != nil {
			pid = "unknown"
		}
		return nil, fmt.Errorf("sqlite: %s is in use by another durabox process (pid %s); stop it first or use another --db file", path, pid)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

var sqliteHeader = []byte("SQLite format 3\x00")

// checkHeader refuses an existing, non-empty file that is not SQLite,
// before the driver can touch it.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	n, _ := io.ReadFull(f, head)
	if n == 0 {
		return nil
	}
	if !bytes.Equal(head[:n], sqliteHeader) {
		return fmt.Errorf("sqlite: %s is not a SQLite database (its header is wrong); refusing to open it, and it was left as it was", path)
	}
	return nil
}
