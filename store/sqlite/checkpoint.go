package sqlite

import (
	"database/sql"
	"fmt"
)

// Checkpoints. In WAL mode SQLite copies the pages the WAL holds back into
// the database file (a checkpoint) once the WAL passes 1,000 pages, and
// by default the commit that passes it does the copying, with the
// database file's sync: the writer, which every write waits for, stops to
// do it. Here the write connection never checkpoints; a connection of its
// own does, on a goroutine of its own, after every checkpointEvery
// commits, while the writer goes on. A checkpoint that finds the WAL in
// use by readers copies what it can (PASSIVE) and the next one goes on.

// checkpointEvery is how many commits pass between checkpoints.
const checkpointEvery = 32

// startCheckpoints opens the checkpoint connection and starts its
// goroutine, which stops when the store closes.
func (s *Store) startCheckpoints(path string) error {
	if _, err := s.db.Exec(`PRAGMA wal_autocheckpoint = 0`); err != nil {
		return fmt.Errorf("sqlite: open %s: leave checkpoints to their own connection: %w", path, err)
	}
	db, err := sql.Open("sqlite3", dsn(path, s.opts.Durability, false))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s.checkpointer, s.checkpoints = db, make(chan struct{}, 1)
	go s.checkpoint()
	return nil
}

// checkpoint checkpoints each time the writer asks, until the store
// closes. A checkpoint that fails is logged; the next one tries again.
func (s *Store) checkpoint() {
	defer close(s.checkpointDone)
	for {
		select {
		case <-s.stop:
			return
		case <-s.checkpoints:
		}
		if _, err := s.checkpointer.Exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
			s.opts.Logger.Warn("sqlite: checkpoint failed; the next one tries again", "err", err)
		}
	}
}

// askCheckpoint asks for a checkpoint after every checkpointEvery commits.
func (s *Store) askCheckpoint() {
	if s.batches.Load()%checkpointEvery == 0 {
		select {
		case s.checkpoints <- struct{}{}:
		default: // one is on its way
		}
	}
}
