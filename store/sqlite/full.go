package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/durabox/durabox/store"
)

// isFull reports whether err is SQLite's for a disk that is full
// (SQLITE_FULL: a write of the file or its WAL failed with ENOSPC).
func isFull(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrFull
}

// minFree is the free space on the database's file system that ends a
// full disk for checkFull: room for a batch of turns, which a write that
// squeezes into the room the WAL already had does not prove.
const minFree = 1 << 20

// checkFull returns nil unless a write failed for a full disk since the
// file system last had minFree bytes free. Then it looks again, and
// returns store.ErrFull while it has less: Ping, and so a host's
// readiness, fails from the first write the disk refused until there is
// space again, however a smaller write fares meanwhile.
func (s *Store) checkFull() error {
	if !s.full.Load() {
		return nil
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(s.path), &fs); err != nil {
		return fmt.Errorf("sqlite: %w (%s), and its free space cannot be read: %w", store.ErrFull, s.path, err)
	}
	if free := fs.Bavail * uint64(fs.Bsize); free < minFree {
		return fmt.Errorf("sqlite: %w (%s: %d bytes free): writes fail until there is space on it", store.ErrFull, s.path, free)
	}
	s.full.Store(false)
	return nil
}

// writable returns nil unless the disk refused a write, for want of space
// (checkFull) or with an I/O error (checkDisk), and still would. Ping
// answers with it, and so do the leases of work, whose commits would fail
// too: a fetch under way when a turn's commit failed for a full disk took
// that turn again 6 ms later, before its host heard of the failure.
func (s *Store) writable(ctx context.Context) error {
	if err := s.checkFull(); err != nil {
		return err
	}
	return s.checkDisk(ctx)
}
