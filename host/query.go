package host

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// MaxPage is the most instances List returns at once.
const MaxPage = 1000

// List returns a page of the instances q.Filter selects, newest first,
// without their inputs and results (Instance has them). A Limit of zero
// means 100; more than MaxPage, MaxPage.
func (h *Host) List(ctx context.Context, q store.InstanceQuery) (store.InstancePage, error) {
	if err := checkFilter(q.Filter); err != nil {
		return store.InstancePage{}, err
	}
	switch {
	case q.Limit < 0:
		return store.InstancePage{}, fmt.Errorf("%w: the limit is %d; it must be 1 to %d", api.ErrBadInput, q.Limit, MaxPage)
	case q.Limit == 0:
		q.Limit = 100
	}
	q.Limit = min(q.Limit, MaxPage)
	page, err := h.st.ListInstances(ctx, q)
	if errors.Is(err, store.ErrBadCursor) {
		return page, fmt.Errorf("%w: the cursor %s is not one this host gave; start again without it", api.ErrBadInput, abi.Quote(q.After))
	}
	if err != nil {
		return page, fmt.Errorf("host: list instances: %w", err)
	}
	return page, nil
}

// checkFilter refuses a filter with a status no instance can have.
func checkFilter(f store.InstanceFilter) error {
	for _, s := range f.Statuses {
		if !slices.Contains(engine.Statuses(), s) {
			return fmt.Errorf("%w: %s is not a status; an instance is %v", api.ErrBadInput, abi.Quote(string(s)), engine.Statuses())
		}
	}
	return nil
}

// Count counts the instances f selects, per module and status.
func (h *Host) Count(ctx context.Context, f store.InstanceFilter) ([]store.InstanceCount, error) {
	if err := checkFilter(f); err != nil {
		return nil, err
	}
	counts, err := h.st.CountInstances(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("host: count instances: %w", err)
	}
	return counts, nil
}

// Instance returns an instance's state.
func (h *Host) Instance(ctx context.Context, id string) (store.Instance, error) {
	inst, err := h.st.GetInstance(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return inst, notFound(id)
	}
	return inst, err
}

// Executions describes the executions of an instance whose history is
// kept (Options.Retention deletes old ones), oldest first.
func (h *Host) Executions(ctx context.Context, id string) ([]store.Execution, error) {
	xs, err := h.st.Executions(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(id)
	}
	return xs, err
}

// HistoryWarning returns the length of history past which the host warns
// (Options.HistoryWarning).
func (h *Host) HistoryWarning() int { return h.opts.HistoryWarning }

// historyWarning returns the warning GET /v1/instances/{id} gives for an
// execution of events events, when past the warning at threshold, or "".
func historyWarning(events int64, threshold int) string {
	if events <= int64(threshold) {
		return ""
	}
	return fmt.Sprintf("the history of the current execution has %d events, past the warning at %d (serve --history-warning): "+
		"every cold replay reads all of them; an orchestration that runs for ever should continue as new", events, threshold)
}

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
		return nil, notFound(id)
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
