package fakehost

import (
	"context"
	"fmt"
	"slices"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// The fake's batches take every instance that has not finished, whatever
// the filter (which it keeps: Filter), at once: a cancel or a terminate
// is recorded as Cancel and Terminate record theirs, a raise as Raise
// does, and a reset or an upgrade is counted done; the batch has
// completed when StartBatch returns. A request without an action is
// ErrBadInput; the host's tests check the rest.

// DryRunBatch answers with the instances a batch would take.
func (h *Host) DryRunBatch(ctx context.Context, f store.InstanceFilter, req api.BatchRequest) (api.BatchDryRun, error) {
	if err := h.failure("DryRunBatch"); err != nil {
		return api.BatchDryRun{}, err
	}
	if !slices.Contains(api.BatchActions(), req.Action) {
		return api.BatchDryRun{}, fmt.Errorf("%w: the action %q is not one a batch takes", api.ErrBadInput, req.Action)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.filter = f
	ids := h.open()
	return api.BatchDryRun{Matched: len(ids), IDs: ids, DryRun: true}, nil
}

// open returns the ids of the instances not finished, newest first.
// h.mu must be held.
func (h *Host) open() []string {
	ids := []string{}
	for _, inst := range h.instances {
		if !inst.Status.IsTerminal() {
			ids = append(ids, inst.ID)
		}
	}
	return ids
}

// StartBatch carries out the batch at once and keeps it, completed.
func (h *Host) StartBatch(ctx context.Context, f store.InstanceFilter, filter string, req api.BatchRequest) (api.Batch, error) {
	d, err := h.DryRunBatch(ctx, f, req)
	if err != nil {
		return api.Batch{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range d.IDs {
		switch req.Action {
		case api.BatchCancel:
			h.cancelled = append(h.cancelled, id+": "+req.Reason)
		case api.BatchTerminate:
			h.cancelled = append(h.cancelled, "terminate "+id+": "+req.Reason)
		case api.BatchRaise:
			h.raised = append(h.raised, api.RaiseRequest{Name: req.Event, Data: req.Data, Persistent: req.Persistent})
		}
	}
	req.DryRun = false
	now := h.tick()
	b := api.Batch{ID: int64(len(h.batches) + 1), Action: req.Action, Request: req, Filter: filter, State: string(store.BatchCompleted),
		Matched: int64(len(d.IDs)), Done: int64(len(d.IDs)), CreatedAt: now, UpdatedAt: now}
	if len(d.IDs) > 0 {
		b.LastInstance = slices.Max(d.IDs)
	}
	h.batches = append(h.batches, b)
	return b, nil
}

// Batches returns the batches, newest first.
func (h *Host) Batches(ctx context.Context) ([]api.Batch, error) {
	if err := h.failure("Batches"); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.batches)
	slices.Reverse(out)
	return out, nil
}

// Batch returns a batch, or api.ErrBatchNotFound.
func (h *Host) Batch(ctx context.Context, id int64) (api.Batch, error) {
	if err := h.failure("Batch"); err != nil {
		return api.Batch{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if id < 1 || id > int64(len(h.batches)) {
		return api.Batch{}, fmt.Errorf("%w: %d; GET /v1/batches (durabox batch list) lists them", api.ErrBatchNotFound, id)
	}
	return h.batches[id-1], nil
}

// StopBatch refuses every batch the fake has (they have completed), or
// answers api.ErrBatchNotFound.
func (h *Host) StopBatch(ctx context.Context, id int64) (api.Batch, error) {
	b, err := h.Batch(ctx, id)
	if err != nil {
		return b, err
	}
	return api.Batch{}, fmt.Errorf("%w: batch %d is %s already", api.ErrBatchNotRunning, id, b.State)
}
