package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Tx is the statements of a write transaction that both stores say alike,
// in one dialect: the part of TurnTx, EnqueueTx, PurgeTx, ModuleTx,
// OperateTx and ResetTx written once. Each store's transaction type embeds
// it and adds what is its own (how a lock is held, its columns of them).
type Tx struct {
	DB DB
	D  *Dialect
}

func (t Tx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	return t.DB.Exec(ctx, t.D.Rebind(query), args...)
}

func (t Tx) row(ctx context.Context, query string, args ...any) Row {
	return t.DB.QueryRow(ctx, t.D.Rebind(query), args...)
}

// Enqueue adds a message for an instance, visible from visibleAt (Unix
// nanoseconds), stored at now; it drops the message when the instance
// does not exist (Enqueuer).
func (t Tx) Enqueue(ctx context.Context, id string, ev engine.Event, visibleAt int64, now time.Time) error {
	_, err := t.enqueue(ctx, id, ev, visibleAt, now)
	return err
}

// enqueue is Enqueue, reporting whether the instance exists.
func (t Tx) enqueue(ctx context.Context, id string, ev engine.Event, visibleAt int64, now time.Time) (bool, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return false, fmt.Errorf("encode %s message: %w", ev.Kind, err)
	}
	n, err := t.DB.Exec(ctx, t.D.InsertMessage, string(ev.Kind), payload, visibleAt, Nanos(now), id)
	t.D.messagesChanged(n)
	return n == 1, err
}

// InsertInstance creates a Pending instance in execution 1 with its
// OrchestrationStarted message, visible at visible; a child when parent is
// not nil, which reports its end to the parent's event schedule unless
// that is nil. It returns store.ErrInstanceExists if the id is taken, or
// an error wrapping store.ErrNotFound if the module is not deployed.
func (t Tx) InsertInstance(ctx context.Context, n store.NewInstance, visible int64, parent *string, schedule *int64) error {
	inserted, err := t.DB.Exec(ctx, t.D.InsertInstance,
		n.ID, n.Name, string(engine.StatusPending), NullIfEmpty(n.Input), Nanos(n.Now), parent, schedule, n.ModuleHash)
	if err != nil {
		return err
	}
	if inserted == 0 {
		var taken bool
		if err := t.row(ctx, `SELECT EXISTS (SELECT 1 FROM instances WHERE id = ?)`, n.ID).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return store.ErrInstanceExists
		}
		return fmt.Errorf("module %s %w", n.ModuleHash, store.ErrNotFound)
	}
	_, err = t.enqueue(ctx, n.ID, engine.StartMessage(n.ID, n.Name, n.Input), visible, n.Now)
	return err
}

// InsertChild creates a child instance whose start is visible at once: a
// child is work of its parent, which has begun (TurnTx).
func (t Tx) InsertChild(ctx context.Context, n store.NewInstance, parent string, schedule *int64) error {
	return t.InsertInstance(ctx, n, VisibleNow, &parent, schedule)
}

// Persistence reads the instance's status and the persistent events its
// execution took, locking its row where the dialect locks rows, so that
// two hosts raising at once count each other's (EnqueueTx).
func (t Tx) Persistence(ctx context.Context, id string) (engine.Status, int, error) {
	var status string
	var taken int
	err := t.row(ctx, `SELECT status, persistent_taken FROM instances WHERE id = ?`+t.D.Lock, id).Scan(&status, &taken)
	if t.D.NoRows(err) {
		return "", 0, fmt.Errorf("instance %q %w", id, store.ErrNotFound)
	}
	return engine.Status(status), taken, err
}

// PersistentWaiting counts the persistent events waiting for the instance
// (EnqueueTx).
func (t Tx) PersistentWaiting(ctx context.Context, id string) (int, error) {
	var waiting int
	err := t.row(ctx, `SELECT count(*) FROM messages WHERE instance_id = ? AND `+t.D.MessageKind+` = ?`,
		id, string(engine.ExternalEventPersistent)).Scan(&waiting)
	return waiting, err
}

// Status reads the instance's status, locking its row where the dialect
// locks rows (PurgeTx).
func (t Tx) Status(ctx context.Context, id string) (engine.Status, bool, error) {
	var status string
	err := t.row(ctx, `SELECT status FROM instances WHERE id = ?`+t.D.Lock, id).Scan(&status)
	if t.D.NoRows(err) {
		return "", false, nil
	}
	return engine.Status(status), err == nil, err
}

// DeleteInstance deletes the instance with its history, messages and
// activity tasks, and detaches its children (PurgeTx).
func (t Tx) DeleteInstance(ctx context.Context, id string) error {
	for _, statement := range []string{
		// A child of the instance must not report to a new one that takes
		// its id.
		`UPDATE instances SET parent_id = NULL, parent_schedule_id = NULL WHERE parent_id = ?`,
		`DELETE FROM history WHERE instance_id = ?`,
		`DELETE FROM continued_executions WHERE instance_id = ?`,
		`DELETE FROM messages WHERE instance_id = ?`,
		`DELETE FROM activity_tasks WHERE instance_id = ?`,
		`DELETE FROM instances WHERE id = ?`,
	} {
		if _, err := t.exec(ctx, statement, id); err != nil {
			return err
		}
	}
	t.D.messagesChanged(1)
	return nil
}

// Orchestrations reads the module's list of orchestrations, locking its
// row where the dialect locks rows (ModuleTx).
func (t Tx) Orchestrations(ctx context.Context, hash string) (string, bool, error) {
	var orch string
	err := t.row(ctx, `SELECT orchestrations FROM modules WHERE hash = ?`+t.D.Lock, hash).Scan(&orch)
	if t.D.NoRows(err) {
		return "", false, nil
	}
	return orch, err == nil, err
}

// InstancesOn counts the instances that run on the module (ModuleTx).
func (t Tx) InstancesOn(ctx context.Context, hash string) (int, error) {
	var n int
	err := t.row(ctx, `SELECT count(*) FROM instances WHERE module_hash = ?`, hash).Scan(&n)
	return n, err
}

// Delete deletes the module and the orchestrations it is the newest
// module of (ModuleTx).
func (t Tx) Delete(ctx context.Context, hash string) error {
	for _, statement := range []string{`DELETE FROM orchestration_modules WHERE hash = ?`, `DELETE FROM modules WHERE hash = ?`} {
		if _, err := t.exec(ctx, statement, hash); err != nil {
			return err
		}
	}
	return nil
}

// Repoint makes the newest module that registers the orchestration its
// module, if there is one (ModuleTx).
func (t Tx) Repoint(ctx context.Context, orchestration string) error {
	_, err := t.DB.Exec(ctx, t.D.Repoint, orchestration)
	return err
}

// ModuleExists reports whether the module hash is deployed (OperateTx).
func (t Tx) ModuleExists(ctx context.Context, hash string) (bool, error) {
	var ok bool
	err := t.row(ctx, `SELECT EXISTS (SELECT 1 FROM modules WHERE hash = ?)`, hash).Scan(&ok)
	return ok, err
}

// Detach makes the parent's children of the given ids no longer report
// to it (ResetTx).
func (t Tx) Detach(ctx context.Context, parent string, children []string) error {
	for _, child := range children {
		if _, err := t.exec(ctx, `UPDATE instances SET parent_schedule_id = NULL WHERE id = ? AND parent_id = ?`, child, parent); err != nil {
			return fmt.Errorf("detach child %q: %w", child, err)
		}
	}
	return nil
}

// Child reads how a child of parent stands (ResetTx).
func (t Tx) Child(ctx context.Context, parent, id string) (ChildState, bool, error) {
	var c ChildState
	var status string
	err := t.row(ctx, `SELECT status, result, failure FROM instances WHERE id = ? AND parent_id = ?`, id, parent).
		Scan(&status, &c.Result, &c.Failure)
	if t.D.NoRows(err) {
		return c, false, nil
	}
	c.Status = engine.Status(status)
	return c, err == nil, err
}

// Reattach makes a child report to its parent's event schedule (ResetTx).
func (t Tx) Reattach(ctx context.Context, child string, schedule int64) error {
	_, err := t.exec(ctx, `UPDATE instances SET parent_schedule_id = ? WHERE id = ?`, schedule, child)
	return err
}
