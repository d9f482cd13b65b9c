package sqlstore

import (
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Rows is what both drivers' query results have in common (*sql.Rows,
// pgx.Rows); the caller closes them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Events appends to out the events of rows (event id, JSON event), in
// their order. EventsFor makes an out with room for the rows a caller
// expects.
//
// Payload is what the payload column is scanned into: sql.RawBytes for
// database/sql, which lends the driver's bytes until the next row instead
// of copying every row a second time (the decoder copies what it keeps),
// and []byte for pgx.
func Events[Payload ~[]byte](rows Rows, out []engine.Event) ([]engine.Event, error) {
	var (
		d       eventDecoder
		eventID int64
		payload Payload
	)
	// One destination list for every row: Scan's arguments escape.
	dest := []any{&eventID, &payload}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, engine.Event{})
		if err := d.decode([]byte(payload), &out[len(out)-1]); err != nil {
			return nil, fmt.Errorf("%w: event %d does not decode: %w", store.ErrCorrupt, eventID, err)
		}
	}
	return out, rows.Err()
}

// EventsFor returns an empty list with room for n events (nil for none),
// how many rows a caller expects: a long history is read into one slice
// of that size instead of one that grows (growing took 40% of a cold
// replay's read). Past maxCapacity the slice grows from there, so that a
// corrupt event id cannot make the read allocate without bound before the
// history is refused.
func EventsFor(n int) []engine.Event {
	if n <= 0 {
		return nil // as a read of no rows returns
	}
	return make([]engine.Event, 0, min(n, maxCapacity))
}

// maxCapacity bounds the capacity EventsFor trusts: a million events, some
// 230 MB of them.
const maxCapacity = 1 << 20

// Messages reads rows of (message id, JSON event), in their order. A
// message whose row does not decode comes with its Corrupt set, so that
// one damaged row holds up only the instance it is for.
func Messages(rows Rows) ([]store.Message, error) {
	var (
		out []store.Message
		d   eventDecoder
	)
	for rows.Next() {
		var id int64
		var payload []byte
		if err := rows.Scan(&id, &payload); err != nil {
			return nil, err
		}
		out = append(out, d.message(id, payload))
	}
	return out, rows.Err()
}

// Message is the message id whose row holds payload, as Messages reads
// it.
func Message(id int64, payload []byte) store.Message {
	var d eventDecoder
	return d.message(id, payload)
}

// message decodes the message id whose row holds payload.
func (d *eventDecoder) message(id int64, payload []byte) store.Message {
	m := store.Message{ID: id}
	if err := d.decode(payload, &m.Event); err != nil {
		m.Event, m.Corrupt = engine.Event{}, fmt.Errorf("%w: message %d does not decode: %w", store.ErrCorrupt, m.ID, err)
	}
	return m
}
