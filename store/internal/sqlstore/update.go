package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// updateColumns are the columns scanUpdate reads, in its order.
const updateColumns = `instance_id, update_id, name, input, state, result, failure, requested_at, answered_at`

// scanUpdate scans a row of updateColumns.
func scanUpdate(r Row) (store.Update, error) {
	var u store.Update
	var state string
	var input, result []byte
	var failure *string
	var requested int64
	var answered *int64
	if err := r.Scan(&u.InstanceID, &u.ID, &u.Name, &input, &state, &result, &failure, &requested, &answered); err != nil {
		return u, err
	}
	u.Input, u.Result = input, result
	u.State, u.Failure, u.RequestedAt = store.UpdateState(state), DecodeFailure(failure), FromNanos(requested)
	if answered != nil {
		u.AnsweredAt = FromNanos(*answered)
	}
	return u, nil
}

// update reads the instance's update of id; found is false when it has
// none.
func (t Tx) update(ctx context.Context, instanceID, id string) (u store.Update, found bool, err error) {
	u, err = scanUpdate(t.row(ctx, `SELECT `+updateColumns+` FROM updates WHERE instance_id = ? AND update_id = ?`, instanceID, id))
	if t.D.NoRows(err) {
		return u, false, nil
	}
	return u, err == nil, err
}

// RequestUpdate records the update u of the instance with its message,
// or returns the one of its ID the instance has; with start, it first
// creates the instance, unless its id is taken (the rules of
// store.Queue.RequestUpdate).
func (s *Store) RequestUpdate(ctx context.Context, start *store.NewInstance, instanceID string, u store.Update, now time.Time) (store.Update, bool, error) {
	if start != nil && start.ID != instanceID {
		return u, false, s.errorf("update with start of %q starts %q: they must be the same instance", instanceID, start.ID)
	}
	var got store.Update
	var started bool
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) error {
		got, started = store.Update{}, false
		visible := int64(VisibleNow)
		if start != nil {
			err := tx.InsertInstance(ctx, *start, nil, nil)
			switch {
			case err == nil:
				started, visible = true, VisibleToStart
			case !errors.Is(err, store.ErrInstanceExists):
				return err
			}
		}
		had, found, err := tx.update(ctx, instanceID, u.ID)
		if err != nil || found {
			got = had
			return err
		}
		status, _, err := tx.Persistence(ctx, instanceID)
		if err != nil {
			return err
		}
		if status.IsTerminal() {
			return fmt.Errorf("%w: it is %s", store.ErrFinished, status)
		}
		got = store.Update{InstanceID: instanceID, ID: u.ID, Name: u.Name, Input: u.Input, State: store.UpdateRequested, RequestedAt: now}
		if err := tx.send(ctx, `INSERT INTO updates (`+updateColumns+`) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, NULL)`,
			instanceID, u.ID, u.Name, NullIfEmpty(u.Input), string(store.UpdateRequested), Nanos(now)); err != nil {
			return err
		}
		msg := engine.UpdateRequest(u.ID, u.Name, u.Input)
		msg.By = u.By
		return tx.Enqueue(ctx, instanceID, msg, visible, now)
	})
	if err != nil {
		return got, false, s.errorf("update %q of %q: %w", u.Name, instanceID, err)
	}
	return got, started, nil
}

// GetUpdate returns the instance's update of id, or an error wrapping
// store.ErrNotFound.
func (s *Store) GetUpdate(ctx context.Context, instanceID, id string) (store.Update, error) {
	var u store.Update
	err := s.a.Read(ctx, func(q DB) (err error) {
		u, err = scanUpdate(s.queryRow(ctx, q, `SELECT `+updateColumns+` FROM updates WHERE instance_id = ? AND update_id = ?`, instanceID, id))
		return err
	})
	if s.d.NoRows(err) {
		return u, s.errorf("instance %q has no update %q: %w", instanceID, id, store.ErrNotFound)
	}
	if err != nil {
		return u, s.errorf("update %q of %q: %w", id, instanceID, err)
	}
	return u, nil
}

// AnswerUpdates brings the instance's updates to what the commit c
// records (TurnTx): the rules of store.TurnCommit.Refused.
func (t Tx) AnswerUpdates(ctx context.Context, c store.TurnCommit) error {
	answer := func(id string, state store.UpdateState, result []byte, failure *engine.Failure) error {
		return t.send(ctx, `UPDATE updates SET state = ?, result = ?, failure = ?, answered_at = ? WHERE instance_id = ? AND update_id = ?`,
			string(state), NullIfEmpty(result), EncodeFailure(failure), Nanos(c.Now), c.InstanceID, id)
	}
	if r := c.Refused; r != nil {
		return answer(r.UpdateID, store.UpdateRefused, nil, r.Failure)
	}
	for _, ev := range c.NewEvents {
		var err error
		switch {
		case ev.Kind == engine.UpdateAccepted:
			err = t.send(ctx, `UPDATE updates SET state = ? WHERE instance_id = ? AND update_id = ?`, string(store.UpdateAccepted), c.InstanceID, ev.UpdateID)
		case ev.Kind == engine.UpdateCompleted && ev.Failure != nil:
			err = answer(ev.UpdateID, store.UpdateFailed, nil, ev.Failure)
		case ev.Kind == engine.UpdateCompleted:
			err = answer(ev.UpdateID, store.UpdateCompleted, ev.Result, nil)
		}
		if err != nil {
			return err
		}
	}
	unanswered := func(why string, states ...store.UpdateState) error {
		args := []any{string(store.UpdateFailed), EncodeFailure(&engine.Failure{Message: why}), Nanos(c.Now), c.InstanceID}
		in := ""
		for i, s := range states {
			if i > 0 {
				in += ", "
			}
			in += "?"
			args = append(args, string(s))
		}
		return t.send(ctx, `UPDATE updates SET state = ?, failure = ?, answered_at = ? WHERE instance_id = ? AND state IN (`+in+`)`, args...)
	}
	switch {
	case c.ContinueAsNew != nil:
		return unanswered("the execution that accepted the update continued as new before the update's handler returned "+
			"(an orchestration waits for its handlers with ctx.Await(ctx.AllHandlersFinished))", store.UpdateAccepted)
	case c.Status.IsTerminal():
		return unanswered(fmt.Sprintf("the instance ended (%s) before the update was answered", c.Status), store.UpdateRequested, store.UpdateAccepted)
	}
	return nil
}
