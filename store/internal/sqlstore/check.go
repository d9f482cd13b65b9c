package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// CheckInvariants reads every instance, event and message through q and
// adds to c each way the rows break the store's invariants, which no
// commit of either store breaks:
//
//   - every row of history, continued_executions, messages, activity_tasks
//     and updates belongs to an instance that exists (a purge deletes them
//     with it);
//   - an instance's last_event_id is the last event of its current
//     execution's history;
//   - each execution's history is one an engine writes
//     (engine.CheckHistory: ids from 1 without gaps, a start, nothing after
//     the end, each completion naming its schedule), and every event and
//     message decodes.
//
// Each invariant is one query, which sees one commit, so that a check of a
// database a host is writing finds no problem the host is not making.
func CheckInvariants(ctx context.Context, q DB, c *store.Check) error {
	for _, table := range []string{"history", "continued_executions", "messages", "activity_tasks", "updates"} {
		if err := orphans(ctx, q, table, c); err != nil {
			return fmt.Errorf("check %s: %w", table, err)
		}
	}
	if err := lastEvents(ctx, q, c); err != nil {
		return fmt.Errorf("check instances: %w", err)
	}
	executions, events, err := histories(ctx, q, c)
	if err != nil {
		return fmt.Errorf("check history: %w", err)
	}
	messages, err := messagesDecode(ctx, q, c)
	if err != nil {
		return fmt.Errorf("check messages: %w", err)
	}
	var instances int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM instances`).Scan(&instances); err != nil {
		return fmt.Errorf("count instances: %w", err)
	}
	c.Did("the store's invariants (instances %d, executions %d, events %d, messages %d)", instances, executions, events, messages)
	return nil
}

// orphans finds the rows of table for instances that do not exist.
func orphans(ctx context.Context, q DB, table string, c *store.Check) error {
	rows, err := q.Query(ctx, `SELECT t.instance_id, count(*) FROM `+table+` t
		LEFT JOIN instances i ON i.id = t.instance_id WHERE i.id IS NULL GROUP BY t.instance_id ORDER BY t.instance_id`)
	return each(rows, err, func(r Rows) error {
		var id string
		var n int64
		if err := r.Scan(&id, &n); err != nil {
			return err
		}
		c.Problem("%s: %d rows for instance %q, which does not exist", table, n, id)
		return nil
	})
}

// lastEvents finds the instances whose last_event_id is not the last event
// of their current execution's history.
func lastEvents(ctx context.Context, q DB, c *store.Check) error {
	rows, err := q.Query(ctx, `SELECT i.id, i.execution_id, i.last_event_id, coalesce(max(h.event_id), 0) FROM instances i
		LEFT JOIN history h ON h.instance_id = i.id AND h.execution_id = i.execution_id
		GROUP BY i.id, i.execution_id, i.last_event_id
		HAVING i.last_event_id <> coalesce(max(h.event_id), 0) ORDER BY i.id`)
	return each(rows, err, func(r Rows) error {
		var id string
		var execution, last, stored int64
		if err := r.Scan(&id, &execution, &last, &stored); err != nil {
			return err
		}
		c.Problem("instance %q execution %d: its last event is %d, but its history's last is %d", id, execution, last, stored)
		return nil
	})
}

// histories reads every history, one execution at a time in the order of
// the primary key, and checks each with engine.CheckHistory.
func histories(ctx context.Context, q DB, c *store.Check) (executions, events int64, err error) {
	var (
		id, prevID       string
		execution, prevX int64
		history          []engine.Event
		broken           bool
		dec              eventDecoder
	)
	check := func() {
		if broken || len(history) == 0 {
			return
		}
		if err := engine.CheckHistory(history); err != nil {
			c.Problem("instance %q execution %d: %s", prevID, prevX, strings.TrimPrefix(err.Error(), engine.ErrCorruptHistory.Error()+": "))
		}
	}
	rows, err := q.Query(ctx, `SELECT instance_id, execution_id, event_id, payload FROM history ORDER BY instance_id, execution_id, event_id`)
	err = each(rows, err, func(r Rows) error {
		var eventID int64
		var payload []byte
		if err := r.Scan(&id, &execution, &eventID, &payload); err != nil {
			return err
		}
		events++
		if id != prevID || execution != prevX {
			check()
			executions++
			prevID, prevX, history, broken, dec = id, execution, history[:0], false, eventDecoder{}
		}
		if broken {
			return nil
		}
		var ev engine.Event
		switch err := dec.decode(payload, &ev); {
		case err != nil:
			c.Problem("instance %q execution %d: event %d does not decode: %v", id, execution, eventID, err)
			broken = true
		case ev.ID != eventID:
			c.Problem("instance %q execution %d: the row of event %d holds event %d", id, execution, eventID, ev.ID)
			broken = true
		default:
			history = append(history, ev)
		}
		return nil
	})
	check()
	return executions, events, err
}

// messagesDecode finds the messages that do not decode.
func messagesDecode(ctx context.Context, q DB, c *store.Check) (n int64, err error) {
	var dec eventDecoder
	rows, err := q.Query(ctx, `SELECT id, instance_id, payload FROM messages ORDER BY id`)
	err = each(rows, err, func(r Rows) error {
		var id int64
		var instance string
		var payload []byte
		if err := r.Scan(&id, &instance, &payload); err != nil {
			return err
		}
		n++
		var ev engine.Event
		if err := dec.decode(payload, &ev); err != nil {
			c.Problem("message %d for instance %q does not decode: %v", id, instance, err)
		}
		return nil
	})
	return n, err
}

// each calls fn for every row of a query, and closes the rows.
func each(rows QueryRows, err error, fn func(r Rows) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
