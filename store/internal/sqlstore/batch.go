package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/store"
)

// batchColumns are the columns scanBatch reads, in its order.
const batchColumns = `id, action, args, filter, by_token, rate, state, matched, done, failed, skipped, last_instance, last_error, created_at, updated_at`

// scanBatch scans a row of batchColumns.
func scanBatch(r Row) (store.Batch, error) {
	var b store.Batch
	var state string
	var created, updated int64
	var args []byte
	err := r.Scan(&b.ID, &b.Action, &args, &b.Filter, &b.By, &b.Rate, &state, &b.Matched, &b.Done, &b.Failed, &b.Skipped,
		&b.LastInstance, &b.LastError, &created, &updated)
	b.Args, b.State, b.CreatedAt, b.UpdatedAt = args, store.BatchState(state), FromNanos(created), FromNanos(updated)
	return b, err
}

// CreateBatch stores a new running batch and, as its items, the ids of
// the instances f selects, in one transaction (store.Batches).
func (s *Store) CreateBatch(ctx context.Context, b store.Batch, f store.InstanceFilter) (store.Batch, error) {
	b.State, b.UpdatedAt = store.BatchRunning, b.CreatedAt
	b.Done, b.Failed, b.Skipped, b.LastInstance, b.LastError = 0, 0, 0, "", ""
	if len(b.Args) == 0 {
		b.Args = []byte("null")
	}
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		err := tx.row(ctx, `INSERT INTO batches (action, args, filter, by_token, rate, state, matched, done, failed, skipped,
			last_instance, last_error, owner, lease_until, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0, 0, '', '', '', 0, ?, ?) RETURNING id`,
			b.Action, []byte(b.Args), b.Filter, b.By, b.Rate, string(b.State), Nanos(b.CreatedAt), Nanos(b.UpdatedAt)).Scan(&b.ID)
		if err != nil {
			return err
		}
		w := s.d.where()
		id := w.Arg(b.ID)
		w.Filter(f)
		if b.Matched, err = tx.DB.Exec(ctx, `INSERT INTO batch_items (batch_id, instance_id, outcome, detail)
			SELECT `+id+`, id, '', '' FROM instances WHERE `+w.String(), w.Args...); err != nil {
			return err
		}
		err = tx.send(ctx, `UPDATE batches SET matched = ? WHERE id = ?`, b.Matched, b.ID)
		return err
	})
	if err != nil {
		return b, s.errorf("create a batch (%s of %s): %w", b.Action, b.Filter, err)
	}
	return b, nil
}

// GetBatch returns a batch, or an error wrapping store.ErrNotFound.
func (s *Store) GetBatch(ctx context.Context, id int64) (store.Batch, error) {
	var b store.Batch
	err := s.a.Read(ctx, func(q DB) (err error) {
		b, err = scanBatch(s.queryRow(ctx, q, `SELECT `+batchColumns+` FROM batches WHERE id = ?`, id))
		return err
	})
	if s.d.NoRows(err) {
		return b, s.errorf("batch %d %w", id, store.ErrNotFound)
	}
	if err != nil {
		return b, s.errorf("get batch %d: %w", id, err)
	}
	return b, nil
}

// ListBatches returns up to max batches, newest first.
func (s *Store) ListBatches(ctx context.Context, max int) ([]store.Batch, error) {
	if err := CheckMax(max); err != nil {
		return nil, s.errorf("list batches: %w", err)
	}
	var out []store.Batch
	err := s.a.Read(ctx, func(q DB) error {
		rows, err := q.Query(ctx, s.d.Rebind(`SELECT `+batchColumns+` FROM batches ORDER BY id DESC LIMIT ?`), max)
		out, err = collect(rows, err, func(r Rows) (store.Batch, error) { return scanBatch(r) })
		return err
	})
	if err != nil {
		return nil, s.errorf("list batches: %w", err)
	}
	return out, nil
}

// BatchItems returns up to max items of a batch after an instance id, in
// the order of their ids (store.Batches).
func (s *Store) BatchItems(ctx context.Context, id int64, after string, max int, taken bool) ([]store.BatchItem, error) {
	if err := CheckMax(max); err != nil {
		return nil, s.errorf("items of batch %d: %w", id, err)
	}
	cond := ""
	if taken {
		cond = ` AND outcome <> ''`
	}
	var out []store.BatchItem
	err := s.a.Read(ctx, func(q DB) error {
		rows, err := q.Query(ctx, s.d.Rebind(`SELECT instance_id, outcome, detail FROM batch_items
			WHERE batch_id = ? AND instance_id > ?`+cond+` ORDER BY instance_id LIMIT ?`), id, after, max)
		out, err = collect(rows, err, func(r Rows) (store.BatchItem, error) {
			var it store.BatchItem
			var outcome string
			err := r.Scan(&it.InstanceID, &outcome, &it.Detail)
			it.Outcome = store.ItemOutcome(outcome)
			return it, err
		})
		return err
	})
	if err != nil {
		return nil, s.errorf("items of batch %d: %w", id, err)
	}
	return out, nil
}

// ClaimBatches gives owner the running batches nobody else holds, and
// extends its lease of those it holds (store.Batches). Of two hosts that
// claim at once, the second's UPDATE waits for the first's (a row lock)
// and then finds the batch held.
func (s *Store) ClaimBatches(ctx context.Context, owner string, now time.Time, lease time.Duration) ([]store.Batch, error) {
	// Every host asks every second or so: with no batch running, it
	// writes nothing.
	var running bool
	err := s.a.Read(ctx, func(q DB) error {
		rows, err := q.Query(ctx, `SELECT id FROM batches WHERE state = 'running' LIMIT 1`)
		ids, err := collect(rows, err, scanOne[int64])
		running = len(ids) > 0
		return err
	})
	if err != nil {
		return nil, s.errorf("claim batches: %w", err)
	}
	if !running {
		return nil, nil
	}
	var out []store.Batch
	// A lease lost to a crash loses nothing: the runner's steps are
	// durable, and another takes the batch when the lease ends.
	err = s.a.WriteUnsynced(ctx, func(ctx context.Context, tx Tx) error {
		if err := tx.send(ctx, `UPDATE batches SET owner = ?, lease_until = ?
			WHERE state = 'running' AND (owner = '' OR owner = ? OR lease_until < ?)`, owner, Nanos(now.Add(lease)), owner, Nanos(now)); err != nil {
			return err
		}
		rows, err := tx.DB.Query(ctx, s.d.Rebind(`SELECT `+batchColumns+` FROM batches WHERE owner = ? AND state = 'running' ORDER BY id`), owner)
		out, err = collect(rows, err, func(r Rows) (store.Batch, error) { return scanBatch(r) })
		return err
	})
	if err != nil {
		return nil, s.errorf("claim batches: %w", err)
	}
	return out, nil
}

// ReleaseBatches ends owner's leases of batches.
func (s *Store) ReleaseBatches(ctx context.Context, owner string) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		return tx.send(ctx, `UPDATE batches SET owner = '', lease_until = 0 WHERE owner = ?`, owner)
	})
	if err != nil {
		return s.errorf("release batches: %w", err)
	}
	return nil
}

// StepBatch records one step of a batch's runner (store.Batches).
func (s *Store) StepBatch(ctx context.Context, st store.BatchStep) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		fence := ` WHERE id = ? AND owner = ? AND state = 'running' AND last_instance = ?`
		set, args := `state = ?, owner = '', lease_until = 0, updated_at = ?`, []any{string(store.BatchCompleted), Nanos(st.Now)}
		if st.Instance != "" {
			var done, failed, skipped int
			switch st.Outcome {
			case store.ItemDone:
				done = 1
			case store.ItemFailed:
				failed = 1
			case store.ItemSkipped:
				skipped = 1
			default:
				return fmt.Errorf("the outcome %q of instance %q is not one of done, failed or skipped", st.Outcome, st.Instance)
			}
			set, args = `done = done + ?, failed = failed + ?, skipped = skipped + ?, last_instance = ?, updated_at = ?, lease_until = ?`,
				[]any{done, failed, skipped, st.Instance, Nanos(st.Now), Nanos(st.LeaseUntil)}
			if failed == 1 {
				set, args = set+`, last_error = ?`, append(args, st.Detail)
			}
		}
		n, err := tx.exec(ctx, `UPDATE batches SET `+set+fence, append(args, st.ID, st.Owner, st.After)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: batch %d is not held by this runner at instance %q (stopped, completed, or taken over)", store.ErrLeaseLost, st.ID, st.After)
		}
		if st.Instance == "" {
			return nil
		}
		err = tx.send(ctx, `UPDATE batch_items SET outcome = ?, detail = ? WHERE batch_id = ? AND instance_id = ?`,
			string(st.Outcome), st.Detail, st.ID, st.Instance)
		return err
	})
	if err != nil {
		return s.errorf("record a step of batch %d: %w", st.ID, err)
	}
	return nil
}

// StopBatch stops a running batch (store.Batches).
func (s *Store) StopBatch(ctx context.Context, id int64, now time.Time) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		var state string
		err := tx.row(ctx, `SELECT state FROM batches WHERE id = ?`+s.d.Lock, id).Scan(&state)
		switch {
		case s.d.NoRows(err):
			return fmt.Errorf("batch %d %w", id, store.ErrNotFound)
		case err != nil:
			return err
		case state != string(store.BatchRunning):
			return fmt.Errorf("%w: batch %d is %s", store.ErrFinished, id, state)
		}
		err = tx.send(ctx, `UPDATE batches SET state = ?, owner = '', lease_until = 0, updated_at = ? WHERE id = ?`,
			string(store.BatchStopped), Nanos(now), id)
		return err
	})
	if err != nil {
		return s.errorf("stop batch %d: %w", id, err)
	}
	return nil
}

// DeleteBatches deletes up to max of the batches that ended before
// before, those that ended first first, each with its items, in one
// transaction, and returns how many (store.Batches). Batches another
// host is deleting at once are skipped (Dialect.SkipLocked).
func (s *Store) DeleteBatches(ctx context.Context, before time.Time, max int) (int, error) {
	if err := CheckMax(max); err != nil {
		return 0, s.errorf("delete batches: %w", err)
	}
	var old []int64
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) (err error) {
		// A batch's updated_at is when it ended, once it has: nothing
		// changes it after.
		rows, err := tx.DB.Query(ctx, s.d.Rebind(`SELECT id FROM batches WHERE state <> ? AND updated_at < ? ORDER BY updated_at, id LIMIT ?`+s.d.SkipLocked),
			string(store.BatchRunning), Nanos(before), max)
		if old, err = collect(rows, err, scanOne[int64]); err != nil {
			return err
		}
		for _, id := range old {
			for _, statement := range []string{`DELETE FROM batch_items WHERE batch_id = ?`, `DELETE FROM batches WHERE id = ?`} {
				if _, err := tx.exec(ctx, statement, id); err != nil {
					return fmt.Errorf("batch %d: %w", id, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, s.errorf("delete batches: %w", err)
	}
	return len(old), nil
}
