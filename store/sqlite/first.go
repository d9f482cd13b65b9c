package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// The store knows, without reading, when no message is visible. A message
// becomes visible at its visible_at, which never changes once the message
// is stored, and every message is stored by the store's one writer
// (write.go). So the earliest visible_at of the messages table, once read,
// holds until the writer commits a new message: a deletion only makes it
// later. Until then, finding instances with work, HasWork, NextVisibleAt
// and the read of a locked instance's messages answer from memory whenever
// that earliest time is still to come, instead of reading on a read
// connection, which after any commit starts with a cold page cache. An
// instance that runs activity after activity, whose results wait in
// memory (results.go), then finds its next turn without reading for it,
// and so does every worker that looks for work and finds none.
//
// Each write that inserts messages counts them in changes, before its
// transaction commits; the writer copies changes to committed once the
// transaction has committed (or failed), before it tells anyone how the
// write ended. A read of the earliest visible_at that began after
// committed was c has seen every message counted in c, and what it read
// holds while committed is still c. A write that deletes messages counts
// too, so that the store reads again once the messages visible at the last
// read are gone; one that forgot to would cost reads, never work.
type firstMessage struct {
	// changes counts the messages written and the deletions, committed or
	// not.
	changes atomic.Int64
	// committed is changes as it was after the writer's last commit.
	committed atomic.Int64

	mu sync.Mutex
	// at is the committed count first was read at; -1 before the first
	// read.
	at int64
	// first is the earliest visible_at of the messages then;
	// math.MaxInt64 when there were none.
	first int64
}

func newFirstMessage() *firstMessage { return &firstMessage{at: -1} }

// changed counts n messages a write is inserting, or a deletion.
func (f *firstMessage) changed(n int64) { f.changes.Add(n) }

// commit says the writer's transaction has ended: every change counted so
// far is committed, or rolled back.
func (f *firstMessage) commit() { f.committed.Store(f.changes.Load()) }

// firstVisibleAt returns the earliest visible_at of the messages (Unix
// nanoseconds; math.MaxInt64 when there are none), or a time before it: no
// message is visible before the time it returns. It reads the table only
// if a message was committed since it last did.
func (s *Store) firstVisibleAt(ctx context.Context) (int64, error) {
	f := s.first
	c := f.committed.Load()
	f.mu.Lock()
	at, first := f.at, f.first
	f.mu.Unlock()
	if at == c {
		return first, nil
	}
	// visible_at leads the messages_visible index: one step into it.
	var earliest sql.NullInt64
	if err := s.readers.QueryRowContext(ctx, `SELECT min(visible_at) FROM messages`).Scan(&earliest); err != nil {
		return 0, fmt.Errorf("first visible message: %w", err)
	}
	first = math.MaxInt64
	if earliest.Valid {
		first = earliest.Int64
	}
	f.mu.Lock()
	if c > f.at {
		f.at, f.first = c, first
	}
	f.mu.Unlock()
	return first, nil
}

// noMessageAt reports whether the store knows that no message is visible
// at now (Unix nanoseconds), reading as firstVisibleAt does.
func (s *Store) noMessageAt(ctx context.Context, now int64) (bool, error) {
	first, err := s.firstVisibleAt(ctx)
	return err == nil && first > now, err
}
