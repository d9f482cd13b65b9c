package host

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// purgeBatch is how many instances or executions one store write deletes,
// so that a large purge does not hold up the turns that share the writer.
const purgeBatch = 256

// Purge deletes a finished instance (engine.Status.IsTerminal) with the
// history of every execution and whatever still waits for it (raised
// events, timers, activity tasks), and frees its id for a new instance. Its
// children live on; a child it waited for no longer reports to it. An
// instance that has not finished is refused with ErrNotFinished: cancel or
// terminate it first, or wait for it to end. Purging is for good: the
// history is not kept anywhere else.
func (h *Host) Purge(ctx context.Context, id string) error {
	err := h.st.Purge(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound(id)
	case errors.Is(err, store.ErrNotFinished):
		return fmt.Errorf("%w: %q has not ended; cancel or terminate it, or wait for it to end, then purge it", api.ErrNotFinished, id)
	case err != nil:
		return fmt.Errorf("host: purge %q: %w", id, err)
	}
	h.cache.drop(context.WithoutCancel(ctx), id)
	h.opts.Logger.Info("instance purged", "instance", id)
	return nil
}

// PurgeMatching purges, as Purge does, every finished instance f selects
// (an instance that has not finished never is, whatever f says), and
// returns how many. With dryRun it purges nothing and returns how many it
// would. It deletes a batch at a time: an error may come after some were
// purged, and n says how many.
func (h *Host) PurgeMatching(ctx context.Context, f store.InstanceFilter, dryRun bool) (n int, err error) {
	if err := f.Check(); err != nil {
		return 0, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if dryRun {
		counts, err := h.Count(ctx, f)
		for _, c := range counts {
			if c.Status.IsTerminal() {
				n += c.Count
			}
		}
		return n, err
	}
	for {
		ids, err := h.st.PurgeInstances(ctx, f, purgeBatch)
		n += len(ids)
		h.cache.drop(context.WithoutCancel(ctx), ids...)
		if err != nil {
			return n, fmt.Errorf("host: purge instances: %w", err)
		}
		if len(ids) < purgeBatch {
			if n > 0 {
				h.opts.Logger.Info("instances purged", "count", n)
			}
			return n, nil
		}
	}
}

// RemoveModule deletes a deployed module that no instance runs on, not even
// a finished one (purge those first), and frees what the host holds for it.
// New instances of its orchestrations then run on the newest module left
// that registers them. A module in use is refused with ErrModuleInUse,
// naming instances that use it.
func (h *Host) RemoveModule(ctx context.Context, hash string) error {
	err := h.st.DeleteModule(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %s", api.ErrModuleNotFound, abi.Quote(hash))
	case errors.Is(err, store.ErrModuleInUse):
		return fmt.Errorf("%w: %s; purge them first (they keep their histories, which it made)", api.ErrModuleInUse, h.users(ctx, hash))
	case err != nil:
		return fmt.Errorf("host: remove module %s: %w", short(hash), err)
	}
	h.reg.remove(context.WithoutCancel(ctx), hash)
	h.opts.Logger.Info("module removed", "hash", short(hash))
	return nil
}

// usersShown is how many of the instances that run on a module users
// names.
const usersShown = 5

// users names the instances that run on a module, for people.
func (h *Host) users(ctx context.Context, hash string) string {
	f := store.InstanceFilter{ModuleHash: hash}
	page, err := h.st.ListInstances(ctx, store.InstanceQuery{Filter: f, Limit: usersShown})
	counts, countErr := h.st.CountInstances(ctx, f)
	if err != nil || countErr != nil {
		return "instances run on it"
	}
	total := 0
	for _, c := range counts {
		total += c.Count
	}
	ids := make([]string, len(page.Instances))
	for i, inst := range page.Instances {
		ids[i] = strconv.Quote(inst.ID)
	}
	list := strings.Join(ids, ", ")
	if total > len(ids) {
		list += fmt.Sprintf(" and %d more", total-len(ids))
	}
	return fmt.Sprintf("%d instances run on it: %s", total, list)
}
