package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/durabox/durabox/store"
)

// scheduleColumns are the columns scanSchedule reads, in its order.
const scheduleColumns = `name, cron, every_ns, timezone, jitter_ns, orchestration, module_hash, input, overlap, catchup_ns,
	paused, note, next_slot, buffered, last_instance, started, skipped, missed, created_at, updated_at`

// scanSchedule scans a row of scheduleColumns.
func scanSchedule(r Row) (store.Schedule, error) {
	var s store.Schedule
	var every, jitter, catchup, next, buffered, created, updated int64
	var overlap string
	var input []byte
	var paused bool
	if err := r.Scan(&s.Name, &s.Cron, &every, &s.Timezone, &jitter, &s.Orchestration, &s.Module, &input, &overlap, &catchup,
		&paused, &s.Note, &next, &buffered, &s.LastInstance, &s.Started, &s.Skipped, &s.Missed, &created, &updated); err != nil {
		return s, err
	}
	s.Every, s.Jitter, s.CatchupWindow = time.Duration(every), time.Duration(jitter), time.Duration(catchup)
	s.Input, s.Overlap, s.Paused = input, store.Overlap(overlap), paused
	s.NextSlot, s.CreatedAt, s.UpdatedAt = FromNanos(next), FromNanos(created), FromNanos(updated)
	if buffered != 0 {
		s.Buffered = FromNanos(buffered)
	}
	return s, nil
}

// orZero is the nanoseconds of t, 0 for the zero time.
func orZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return Nanos(t)
}

// CreateSchedule stores a new schedule, or returns an error wrapping
// store.ErrScheduleExists.
func (s *Store) CreateSchedule(ctx context.Context, sc store.Schedule) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		n, err := tx.exec(ctx, `INSERT INTO schedules (`+scheduleColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
			sc.Name, sc.Cron, int64(sc.Every), sc.Timezone, int64(sc.Jitter), sc.Orchestration, sc.Module, NullIfEmpty(sc.Input),
			string(sc.Overlap), int64(sc.CatchupWindow), sc.Paused, sc.Note, Nanos(sc.NextSlot), orZero(sc.Buffered), sc.LastInstance,
			sc.Started, sc.Skipped, sc.Missed, Nanos(sc.CreatedAt), Nanos(sc.UpdatedAt))
		if err == nil && n == 0 {
			err = store.ErrScheduleExists
		}
		return err
	})
	if err != nil {
		return s.errorf("create schedule %q: %w", sc.Name, err)
	}
	return nil
}

// GetSchedule returns a schedule, or an error wrapping store.ErrNotFound.
func (s *Store) GetSchedule(ctx context.Context, name string) (store.Schedule, error) {
	var sc store.Schedule
	err := s.a.Read(ctx, func(q DB) (err error) {
		sc, err = scanSchedule(s.queryRow(ctx, q, `SELECT `+scheduleColumns+` FROM schedules WHERE name = ?`, name))
		return err
	})
	if s.d.NoRows(err) {
		return sc, s.errorf("schedule %q %w", name, store.ErrNotFound)
	}
	if err != nil {
		return sc, s.errorf("get schedule %q: %w", name, err)
	}
	return sc, nil
}

// ListSchedules returns every schedule, by name.
func (s *Store) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	var out []store.Schedule
	err := s.a.Read(ctx, func(q DB) error {
		rows, err := q.Query(ctx, `SELECT `+scheduleColumns+` FROM schedules ORDER BY name`)
		out, err = collect(rows, err, func(r Rows) (store.Schedule, error) { return scanSchedule(r) })
		return err
	})
	if err != nil {
		return nil, s.errorf("list schedules: %w", err)
	}
	return out, nil
}

// PauseSchedule pauses or resumes a schedule (store.Schedules).
func (s *Store) PauseSchedule(ctx context.Context, name string, paused bool, note string, next, now time.Time) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		set, args := `paused = ?, note = ?, updated_at = ?`, []any{paused, note, Nanos(now)}
		if !paused {
			set, args = set+`, next_slot = ?, buffered = 0`, append(args, Nanos(next))
		}
		n, err := tx.exec(ctx, `UPDATE schedules SET `+set+` WHERE name = ?`, append(args, name)...)
		if err == nil && n == 0 {
			err = fmt.Errorf("schedule %q %w", name, store.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return s.errorf("pause schedule %q: %w", name, err)
	}
	return nil
}

// DeleteSchedule deletes a schedule and its runs' records.
func (s *Store) DeleteSchedule(ctx context.Context, name string) error {
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		n, err := tx.exec(ctx, `DELETE FROM schedules WHERE name = ?`, name)
		if err == nil && n == 0 {
			return fmt.Errorf("schedule %q %w", name, store.ErrNotFound)
		}
		if err == nil {
			err = tx.send(ctx, `DELETE FROM schedule_runs WHERE schedule = ?`, name)
		}
		return err
	})
	if err != nil {
		return s.errorf("delete schedule %q: %w", name, err)
	}
	return nil
}

// FireSchedule carries out one decision of a scheduler, if the schedule
// is still as the decision read it (store.Schedules.FireSchedule). The
// schedule's row is locked first (where the dialect locks rows), so that
// of two hosts firing one slot at once the second waits, then finds the
// slot moved on.
func (s *Store) FireSchedule(ctx context.Context, f store.ScheduleFire) (store.ScheduleRun, error) {
	var run store.ScheduleRun
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		run = store.ScheduleRun{}
		var slot, buffered int64
		var paused bool
		err := tx.row(ctx, `SELECT next_slot, buffered, paused FROM schedules WHERE name = ?`+s.d.Lock, f.Name).Scan(&slot, &buffered, &paused)
		if s.d.NoRows(err) {
			return fmt.Errorf("schedule %q %w", f.Name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if !f.Manual && (paused || slot != Nanos(f.Slot) || buffered != orZero(f.Buffered)) {
			return fmt.Errorf("%w: schedule %q is no longer at slot %s", store.ErrChanged, f.Name, f.Slot.Format(time.RFC3339Nano))
		}
		var started, skipped int64
		last := ""
		if r := f.Run; r != nil {
			run = *r
			switch r.Outcome {
			case store.RunStarted:
				if f.Start == nil {
					return fmt.Errorf("a run started needs its instance")
				}
				err := tx.InsertInstance(ctx, *f.Start, nil, nil)
				switch {
				case errors.Is(err, store.ErrInstanceExists):
					run.Outcome, run.InstanceID = store.RunExisted, f.Start.ID
				case errors.Is(err, store.ErrNotFound): // its module was removed meanwhile
					run.Outcome, run.Error = store.RunFailed, "the run could not start: "+err.Error()
				case err != nil:
					return err
				default:
					started, last, run.InstanceID = 1, f.Start.ID, f.Start.ID
				}
			case store.RunSkipped:
				skipped = 1
			}
			if err := tx.send(ctx, `INSERT INTO schedule_runs (schedule, slot, fired_at, outcome, instance_id, manual, error) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				f.Name, Nanos(run.Slot), Nanos(run.FiredAt), string(run.Outcome), run.InstanceID, run.Manual, run.Error); err != nil {
				return err
			}
			if err := tx.send(ctx, `DELETE FROM schedule_runs WHERE schedule = ? AND id <= (SELECT id FROM schedule_runs WHERE schedule = ?
				ORDER BY id DESC LIMIT 1 OFFSET `+strconv.Itoa(store.MaxScheduleRuns)+`)`, f.Name, f.Name); err != nil {
				return err
			}
		}
		set := `started = started + ?, skipped = skipped + ?, missed = missed + ?, updated_at = ?`
		args := []any{started, skipped, f.Missed, Nanos(f.Now)}
		if last != "" {
			set, args = set+`, last_instance = ?`, append(args, last)
		}
		if !f.Manual {
			set, args = set+`, next_slot = ?, buffered = ?`, append(args, Nanos(f.NextSlot), orZero(f.NextBuffered))
		}
		err = tx.send(ctx, `UPDATE schedules SET `+set+` WHERE name = ?`, append(args, f.Name)...)
		return err
	})
	if err != nil {
		return run, s.errorf("fire schedule %q: %w", f.Name, err)
	}
	return run, nil
}

// ScheduleRuns returns up to max of a schedule's runs, newest first.
func (s *Store) ScheduleRuns(ctx context.Context, name string, max int) ([]store.ScheduleRun, error) {
	var out []store.ScheduleRun
	err := s.a.Read(ctx, func(q DB) error {
		rows, err := q.Query(ctx, s.d.Rebind(`SELECT slot, fired_at, outcome, instance_id, manual, error FROM schedule_runs
			WHERE schedule = ? ORDER BY id DESC LIMIT ?`), name, max)
		out, err = collect(rows, err, func(r Rows) (store.ScheduleRun, error) {
			run := store.ScheduleRun{Schedule: name}
			var slot, fired int64
			var outcome string
			err := r.Scan(&slot, &fired, &outcome, &run.InstanceID, &run.Manual, &run.Error)
			run.Slot, run.FiredAt, run.Outcome = FromNanos(slot), FromNanos(fired), store.RunOutcome(outcome)
			return run, err
		})
		return err
	})
	if err != nil {
		return nil, s.errorf("runs of schedule %q: %w", name, err)
	}
	return out, nil
}
