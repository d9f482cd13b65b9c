package sqlite

import (
	"context"
	"errors"
	"fmt"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/durabox/durabox/store"
)

// diskFailed returns err, a write's, as store.ErrDiskFailed if it is
// SQLite's for an I/O error (SQLITE_IOERR: the disk failed a write or a
// sync with EIO), and notes the failure for checkDisk; other errors it
// returns as they are. SQLite rolls back the transaction an I/O error
// ends, and the connection serves the next one: a write of the WAL that
// failed left no commit in it that a reader sees.
func (s *Store) diskFailed(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrIoErr {
		return err
	}
	s.failed.Store(true)
	if se.ExtendedCode == sqlite3.ErrIoErrFsync {
		return fmt.Errorf("sqlite: %w (%s): the disk failed to sync it, so it was not acknowledged, and it may or may not be kept; ask again once the disk works: %w", store.ErrDiskFailed, s.path, err)
	}
	return fmt.Errorf("sqlite: %w (%s): nothing of the write was written; ask again once the disk works: %w", store.ErrDiskFailed, s.path, err)
}

// checkDisk returns nil unless the disk failed a write since a write last
// succeeded. Then it writes (the schema's version, unchanged: a page of
// the WAL, and its sync) and returns store.ErrDiskFailed while that fails:
// Ping, and so a host's readiness, fails from the first write the disk
// failed until it takes one again, and so do the leases of work, whose
// commits would fail too. (A host stops fetching once it hears of the
// failure, but a fetch under way then took the turns whose commit had
// just failed, and failed them again, 5 ms later.)
func (s *Store) checkDisk(ctx context.Context) error {
	if !s.failed.Load() {
		return nil
	}
	err := s.write(ctx, func(ctx context.Context, tx txConn) error {
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
		return err
	})
	if err != nil {
		var se sqlite3.Error
		if errors.As(err, &se) {
			err = se
		}
		return fmt.Errorf("sqlite: %w (%s): writes fail until it takes one again; a write to try it: %w", store.ErrDiskFailed, s.path, err)
	}
	s.failed.Store(false)
	return nil
}
