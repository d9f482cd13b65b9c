package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// HistoryExecution is the execution History reads when asked for
// execution (0: the current one) of an instance whose current one is
// current, or an error wrapping store.ErrNotFound, or store.ErrCorrupt
// when current is no execution's number (a damaged or edited row).
func HistoryExecution(id string, execution, current int64) (int64, error) {
	if current < 1 {
		return 0, fmt.Errorf("%w: instance %q says its current execution is %d; executions are numbered from 1", store.ErrCorrupt, id, current)
	}
	if execution == 0 {
		execution = current
	}
	if execution < 1 || execution > current {
		return 0, fmt.Errorf("instance %q has no execution %d (its current one is %d): %w", id, execution, current, store.ErrNotFound)
	}
	return execution, nil
}

// HistoryKept returns an error wrapping store.ErrNotFound when execution,
// which is not current, has no events: an execution that ended has events,
// unless they were deleted.
func HistoryKept(id string, execution, current int64, events []engine.Event) error {
	if len(events) == 0 && execution < current {
		return fmt.Errorf("the history of execution %d of instance %q is no longer kept: %w", execution, id, store.ErrNotFound)
	}
	return nil
}

// CheckPersistent returns an error unless ev and max are what
// store.Store.EnqueuePersistent takes.
func CheckPersistent(ev engine.Event, max int) error {
	if ev.Kind != engine.ExternalEventPersistent || max < 1 {
		return fmt.Errorf("EnqueuePersistent of a %s, at most %d: it takes an %s and a max of 1 or more", ev.Kind, max, engine.ExternalEventPersistent)
	}
	return nil
}

// EnqueueTx is a store's statements for enqueueing a message for an
// instance from outside it, in one transaction.
type EnqueueTx interface {
	Enqueuer
	// Persistence reads the instance's status and the persistent events
	// its execution took (locking its row where the database can); an
	// error wrapping store.ErrNotFound when there is no such instance.
	Persistence(ctx context.Context, id string) (status engine.Status, taken int, err error)
	// PersistentWaiting counts the persistent events waiting for the
	// instance.
	PersistentWaiting(ctx context.Context, id string) (int, error)
}

// EnqueueFor adds a message at now for an instance that has not finished;
// with max > 0, a persistent event within max: the rules of
// store.Store.Enqueue and EnqueuePersistent.
func EnqueueFor(ctx context.Context, tx EnqueueTx, id string, ev engine.Event, max int, now time.Time) error {
	status, taken, err := tx.Persistence(ctx, id)
	if err != nil {
		return err
	}
	if status.IsTerminal() {
		return fmt.Errorf("%w: it is %s", store.ErrFinished, status)
	}
	if max > 0 {
		waiting, err := tx.PersistentWaiting(ctx, id)
		if err != nil {
			return err
		}
		if taken+waiting >= max {
			return fmt.Errorf("%w: its execution has taken %d and has %d waiting, at most %d between them", store.ErrTooManyEvents, taken, waiting, max)
		}
	}
	return tx.Enqueue(ctx, id, ev, VisibleNow, now)
}
