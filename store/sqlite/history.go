package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store/internal/sqlstore"
)

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// history reads the events of one execution, in order. A long one is read
// in two halves at once, on two read connections (sqlite3 steps a query
// on the calling thread, so one query uses one CPU): each half is decoded
// into its place in one list.
func history(ctx context.Context, q querier, id string, execution int64) ([]engine.Event, error) {
	// Ids run from 1 without gaps, so the last one (a seek in the primary
	// key) is how many rows to expect; a commit between the two queries
	// only makes the guess short. Every row is read, those of a damaged
	// or edited history below 1 too, so that the engine sees them and
	// refuses the history as corrupt.
	var last int64
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(event_id), 0) FROM history WHERE instance_id = ? AND execution_id = ?`, id, execution).Scan(&last); err != nil {
		return nil, err
	}
	out := sqlstore.EventsFor(int(last))
	if last < halvedHistory || last > int64(cap(out)) {
		return events(ctx, q, id, execution, math.MinInt64, math.MaxInt64, out)
	}
	half := last / 2
	var first []engine.Event
	var firstErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		first, firstErr = events(ctx, q, id, execution, math.MinInt64, half, out[:0:half])
	}()
	second, err := events(ctx, q, id, execution, half, math.MaxInt64, out[half:half])
	<-done
	if err = errors.Join(firstErr, err); err != nil {
		return nil, err
	}
	// The events of an execution are only ever appended, and deleted all
	// at once (a purge). The halves hold the history of one moment if the
	// first is whole and the second holds at least what the guess saw
	// (had a purge come between, it would be empty); anything else reads
	// it again, in one query.
	if len(first) != int(half) || len(second) < int(last-half) {
		return events(ctx, q, id, execution, math.MinInt64, math.MaxInt64, out[:0])
	}
	if int64(len(second)) > last-half {
		// Commits since the guess outgrew the list: the second half was
		// appended to a list of its own.
		return append(out[:half], second...), nil
	}
	return out[:last], nil
}

// halvedHistory is the length from which history reads a history in two
// halves at once.
const halvedHistory = 4096

// events appends to out the events of one execution after event after,
// up to event upTo.
func events(ctx context.Context, q querier, id string, execution, after, upTo int64, out []engine.Event) ([]engine.Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT event_id, payload FROM history WHERE instance_id = ? AND execution_id = ? AND event_id > ? AND event_id <= ? ORDER BY event_id`,
		id, execution, after, upTo)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err = sqlstore.Events[sql.RawBytes](rows, out)
	if err != nil {
		return nil, err
	}
	return out, nil
}
