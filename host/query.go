package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// List returns a page of the instances q.Filter selects, newest first,
// without their inputs and results (Instance has them). A Limit of zero
// means 100; more than api.MaxPage, api.MaxPage.
func (h *Host) List(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error) {
	if err := q.Filter.Check(); err != nil {
		return store.InstancePage{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	switch {
	case q.Limit < 0:
		return store.InstancePage{}, fmt.Errorf("%w: the limit is %d; it must be 1 to %d", api.ErrBadInput, q.Limit, api.MaxPage)
	case q.Limit == 0:
		q.Limit = 100
	}
	q.Limit = min(q.Limit, api.MaxPage)
	page, err := h.st.ListInstances(ctx, q)
	if errors.Is(err, store.ErrBadCursor) {
		return page, fmt.Errorf("%w: the cursor %s is not one this host gave; start again without it", api.ErrBadInput, abi.Quote(q.After))
	}
	if err != nil {
		return page, fmt.Errorf("host: list instances: %w", err)
	}
	return page, nil
}

// Count counts the instances f selects, per module and status.
func (h *Host) Count(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error) {
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	counts, err := h.st.CountInstances(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("host: count instances: %w", err)
	}
	return counts, nil
}

// Instance returns an instance's state.
func (h *Host) Instance(ctx context.Context, id string) (store.Instance, error) {
	return h.ops.Instance(ctx, id)
}

// Executions describes the executions of an instance whose history is
// kept (Options.Retention deletes old ones), oldest first.
func (h *Host) Executions(ctx context.Context, id string) ([]store.Execution, error) {
	xs, err := h.st.Executions(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, api.NotFound(id)
	}
	return xs, err
}

// Attributes returns the search attributes of an instance, by name (none
// when it has none).
func (h *Host) Attributes(ctx context.Context, id string) ([]abi.Attribute, error) {
	attrs, err := h.st.Attributes(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return attrs, nil
}

// HistoryWarning returns the length of history past which the host warns
// (Options.HistoryWarning).
func (h *Host) HistoryWarning() int { return h.opts.HistoryWarning }

// History returns the history of an instance's current execution.
func (h *Host) History(ctx context.Context, id string) ([]engine.Event, error) {
	return h.ExecutionHistory(ctx, id, 0)
}

// ExecutionHistory returns the history of one execution of an instance, from
// 1; 0 means the current one. Executions that continued as new keep theirs
// for Options.Retention. An execution that does not exist, or whose history
// is no longer kept, is ErrNotFound.
func (h *Host) ExecutionHistory(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	events, err := h.st.History(ctx, id, execution)
	if !errors.Is(err, store.ErrNotFound) {
		return events, err
	}
	inst, getErr := h.st.GetInstance(ctx, id)
	switch {
	case getErr != nil:
		return nil, api.NotFound(id)
	case execution == 0:
		// The instance was created between the two reads: its current
		// execution is there now.
		return h.st.History(ctx, id, inst.ExecutionID)
	case execution < 1 || execution > inst.ExecutionID:
		return nil, fmt.Errorf("%w: %q has no execution %d; its executions are 1 to %d", api.ErrExecutionNotFound, id, execution, inst.ExecutionID)
	}
	return nil, fmt.Errorf("%w: the history of execution %d of %q is no longer kept (the host's retention deleted it)", api.ErrExecutionNotFound, execution, id)
}

// Modules returns the deployed modules, newest first.
func (h *Host) Modules(ctx context.Context) ([]store.ModuleInfo, error) {
	return h.st.ListModules(ctx)
}

// Queue describes the work waiting now: messages ready, timers, instances
// running a turn, activity tasks, and the oldest of them.
func (h *Host) Queue(ctx context.Context) (store.QueueStats, error) {
	q, err := h.st.QueueStats(ctx, h.opts.Clock())
	if err != nil {
		return q, fmt.Errorf("host: queue: %w", err)
	}
	return q, nil
}
