package ops

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

// purgeBatch is how many instances, executions or batches one store write deletes,
// so that a large purge does not hold up the turns that share the writer.
const purgeBatch = 256

// Purge carries out Host.Purge (package host says what it does).
func (o *Ops) Purge(ctx context.Context, id string) error {
	err := o.st.Purge(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return api.NotFound(id)
	case errors.Is(err, store.ErrNotFinished):
		return fmt.Errorf("%w: %q has not ended; cancel or terminate it, or wait for it to end, then purge it", api.ErrNotFinished, id)
	case err != nil:
		return fmt.Errorf("host: purge %q: %w", id, err)
	}
	o.rt.Forget(context.WithoutCancel(ctx), id)
	o.opts.Logger.Info("instance purged", "instance", id)
	return nil
}

// PurgeMatching carries out Host.PurgeMatching (package host says what it does).
func (o *Ops) PurgeMatching(ctx context.Context, f store.InstanceFilter, dryRun bool) (n int, err error) {
	if err := f.Check(); err != nil {
		return 0, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if dryRun {
		counts, err := o.st.CountInstances(ctx, f)
		for _, c := range counts {
			if c.Status.IsTerminal() {
				n += c.Count
			}
		}
		return n, err
	}
	for {
		ids, err := o.st.PurgeInstances(ctx, f, purgeBatch)
		n += len(ids)
		o.rt.Forget(context.WithoutCancel(ctx), ids...)
		if err != nil {
			return n, fmt.Errorf("host: purge instances: %w", err)
		}
		if len(ids) < purgeBatch {
			if n > 0 {
				o.opts.Logger.Info("instances purged", "count", n)
			}
			return n, nil
		}
	}
}

// RemoveModule carries out Host.RemoveModule (package host says what it does).
func (o *Ops) RemoveModule(ctx context.Context, hash string) error {
	err := o.st.DeleteModule(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %s", api.ErrModuleNotFound, abi.Quote(hash))
	case errors.Is(err, store.ErrModuleInUse):
		return fmt.Errorf("%w: %s; purge them first (they keep their histories, which it made)", api.ErrModuleInUse, o.users(ctx, hash))
	case err != nil:
		return fmt.Errorf("host: remove module %s: %w", api.Short(hash), err)
	}
	o.rt.ForgetModule(context.WithoutCancel(ctx), hash)
	o.opts.Logger.Info("module removed", "hash", api.Short(hash))
	return nil
}

// usersShown is how many of the instances that run on a module users
// names.
const usersShown = 5

// users names the instances that run on a module, for people.
func (o *Ops) users(ctx context.Context, hash string) string {
	f := store.InstanceFilter{ModuleHash: hash}
	page, err := o.st.ListInstances(ctx, store.InstanceQuery{Filter: f, Limit: usersShown})
	counts, countErr := o.st.CountInstances(ctx, f)
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
