package sqlstore

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// PurgeTx is a store's statements for purging an instance, in one
// transaction.
type PurgeTx interface {
	// Status reads the instance's status (locking its row where the
	// database can); found is false when there is no such instance.
	Status(ctx context.Context, id string) (status engine.Status, found bool, err error)
	// DeleteInstance deletes the instance with its history, messages and activity
	// tasks, and detaches its children: a child must not report to a new
	// instance that takes its id.
	DeleteInstance(ctx context.Context, id string) error
}

// Purge deletes a finished instance: the rules of store.Store.Purge.
func Purge(ctx context.Context, tx PurgeTx, id string) error {
	status, found, err := tx.Status(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("instance %w", store.ErrNotFound)
	}
	if !status.IsTerminal() {
		return fmt.Errorf("%w: it is %s; cancel it or wait for it to end, then purge it", store.ErrNotFinished, status)
	}
	return tx.DeleteInstance(ctx, id)
}

// PurgeAll purges the instances of ids, in order, as Purge does.
func PurgeAll(ctx context.Context, tx PurgeTx, ids []string) error {
	for _, id := range ids {
		if err := Purge(ctx, tx, id); err != nil {
			return fmt.Errorf("%q: %w", id, err)
		}
	}
	return nil
}

// CheckMax returns an error unless max, the most a bulk operation
// (PurgeInstances, DeleteExecutions) takes, is 1 or more.
func CheckMax(max int) error {
	if max < 1 {
		return fmt.Errorf("max is %d; it must be 1 or more", max)
	}
	return nil
}
