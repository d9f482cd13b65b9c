package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/identity"
	"github.com/durabox/durabox/store"
)

// MaxBatches is how many batches Batches lists.
const MaxBatches = 100

// DryRunBatch checks req as StartBatch does and answers with how many
// instances f selects and the ids of up to api.MaxDryRunIDs of them,
// newest first, as GET /v1/instances lists them: what the batch would
// take. It changes nothing.
func (h *Host) DryRunBatch(ctx context.Context, f store.InstanceFilter, req api.BatchRequest) (api.BatchDryRun, error) {
	if _, err := h.checkBatch(ctx, f, req); err != nil {
		return api.BatchDryRun{}, err
	}
	out := api.BatchDryRun{IDs: []string{}, DryRun: true}
	counts, err := h.st.CountInstances(ctx, f)
	if err != nil {
		return out, fmt.Errorf("host: count the instances of a batch: %w", err)
	}
	for _, c := range counts {
		out.Matched += c.Count
	}
	page, err := h.st.ListInstances(ctx, store.InstanceQuery{Filter: f, Limit: api.MaxDryRunIDs})
	if err != nil {
		return out, fmt.Errorf("host: list the instances of a batch: %w", err)
	}
	for _, inst := range page.Instances {
		out.IDs = append(out.IDs, inst.ID)
	}
	return out, nil
}

// StartBatch starts a batch: req.Action on every instance f selects now
// (filter is f as the query of GET /v1/instances, which the batch shows),
// made by whom ctx names, which each change records (the history's By).
// The batch is kept in the store with the ids of those instances, and
// the hosts' batch runners take them in the order of their ids, at most
// req.Rate a second, each through the same code as the operation on one
// instance (Cancel, Terminate, Raise, Reset, Upgrade); a host that stops
// leaves the batch where the next takes it up. A request that cannot be
// taken as it is (an unknown action, a raise without an event's name, an
// upgrade without a module) is refused with api.ErrBadInput, saying
// what was wrong, and nothing is kept.
func (h *Host) StartBatch(ctx context.Context, f store.InstanceFilter, filter string, req api.BatchRequest) (api.Batch, error) {
	args, err := h.checkBatch(ctx, f, req)
	if err != nil {
		return api.Batch{}, err
	}
	b := store.Batch{Action: req.Action, Args: args, Filter: filter, By: identity.From(ctx).Name, Rate: req.Rate, CreatedAt: h.opts.Clock()}
	if b, err = h.st.CreateBatch(ctx, b, f); err != nil {
		return api.Batch{}, fmt.Errorf("host: start a batch: %w", err)
	}
	h.opts.Logger.Info("batch started", "batch", b.ID, "action", b.Action, "filter", b.Filter, "matched", b.Matched, "by", b.By)
	h.batchWork.Notify()
	return batchOf(b), nil
}

// checkBatch refuses a batch request that cannot be taken as it is, and
// returns the arguments the batch keeps: req without DryRun.
func (h *Host) checkBatch(ctx context.Context, f store.InstanceFilter, req api.BatchRequest) (json.RawMessage, error) {
	bad := func(format string, args ...any) (json.RawMessage, error) {
		return nil, fmt.Errorf("%w: %s", api.ErrBadInput, fmt.Sprintf(format, args...))
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if !slices.Contains(api.BatchActions(), req.Action) {
		return bad("the action %s is not one of %s", abi.Quote(req.Action), strings.Join(api.BatchActions(), ", "))
	}
	if req.Rate < 0 || math.IsNaN(req.Rate) || math.IsInf(req.Rate, 0) {
		return bad("the rate is %v; it must be a number of instances a second above 0 (or 0 for no limit)", req.Rate)
	}
	// Each action takes its own arguments and no other's.
	takes := map[string][]string{api.BatchCancel: {"reason"}, api.BatchTerminate: {"reason"}, api.BatchRaise: {"event", "data", "persistent"},
		api.BatchReset: {"resetTo", "module"}, api.BatchUpgrade: {"module"}}[req.Action]
	for _, arg := range []struct {
		name  string
		given bool
	}{{"reason", req.Reason != ""}, {"event", req.Event != ""}, {"data", len(req.Data) > 0}, {"persistent", req.Persistent},
		{"resetTo", req.ResetTo != ""}, {"module", req.Module != ""}} {
		if arg.given && !slices.Contains(takes, arg.name) {
			return bad("a batch's %s takes no %s; it takes %s", req.Action, arg.name, strings.Join(takes, ", "))
		}
	}
	switch req.Action {
	case api.BatchCancel, api.BatchTerminate:
		if err := abi.CheckReason(req.Action+" reason", req.Reason); err != nil {
			return nil, fmt.Errorf("%w: %w", api.ErrBadInput, err)
		}
	case api.BatchRaise:
		if req.Event == "" {
			return bad("a batch's raise needs the name of the event to raise (event)")
		}
		if _, err := h.event(ctx, req.Event, req.Data, req.Persistent); err != nil {
			return nil, err
		}
	case api.BatchReset:
		if _, err := resetPoint(req.ResetTo); err != nil {
			return nil, err
		}
	case api.BatchUpgrade:
		if req.Module == "" {
			return bad("a batch's upgrade needs the module to move the instances to (module: a hash, or a unique prefix of one)")
		}
	}
	if req.Module != "" {
		if _, err := h.ops.ResolveModule(ctx, req.Module); err != nil {
			return nil, err
		}
	}
	req.DryRun = false
	args, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("host: encode a batch's arguments: %w", err)
	}
	return args, nil
}

// resetPoint checks a batch reset's point: api.ResetLastFailure,
// api.ResetStart, or an event's number, which it returns (0 for the
// named points).
func resetPoint(to string) (int64, error) {
	switch to {
	case api.ResetLastFailure, api.ResetStart:
		return 0, nil
	case "":
		return 0, fmt.Errorf("%w: a batch's reset needs its point (resetTo): %s, %s or an event's number", api.ErrBadInput, api.ResetLastFailure, api.ResetStart)
	}
	n, err := strconv.ParseInt(to, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: the reset point %s is not %s, %s or an event's number from 1", api.ErrBadInput, abi.Quote(to), api.ResetLastFailure, api.ResetStart)
	}
	return n, nil
}

// Batches returns the newest batches, up to MaxBatches, newest first.
func (h *Host) Batches(ctx context.Context) ([]api.Batch, error) {
	all, err := h.st.ListBatches(ctx, MaxBatches)
	if err != nil {
		return nil, fmt.Errorf("host: list batches: %w", err)
	}
	out := make([]api.Batch, len(all))
	for i, b := range all {
		out[i] = batchOf(b)
	}
	return out, nil
}

// Batch returns a batch with the instances it failed to change (up to
// api.MaxBatchFailures), or api.ErrBatchNotFound.
func (h *Host) Batch(ctx context.Context, id int64) (api.Batch, error) {
	b, err := h.st.GetBatch(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return api.Batch{}, fmt.Errorf("%w: %d; GET /v1/batches (durabox batch list) lists them", api.ErrBatchNotFound, id)
	}
	if err != nil {
		return api.Batch{}, fmt.Errorf("host: get batch %d: %w", id, err)
	}
	out := batchOf(b)
	if b.Failed == 0 {
		return out, nil
	}
	for after := ""; len(out.Failures) < api.MaxBatchFailures; {
		items, err := h.st.BatchItems(ctx, id, after, 256, true)
		if err != nil {
			return out, fmt.Errorf("host: get batch %d: %w", id, err)
		}
		for _, it := range items {
			if it.Outcome == store.ItemFailed && len(out.Failures) < api.MaxBatchFailures {
				out.Failures = append(out.Failures, api.BatchFailure{InstanceID: it.InstanceID, Error: it.Detail})
			}
		}
		if len(items) < 256 {
			break
		}
		after = items[len(items)-1].InstanceID
	}
	return out, nil
}

// StopBatch stops a running batch: it takes no more instances (the one a
// runner is changing at that moment is changed). A batch that is no
// longer running is refused with api.ErrBatchNotRunning.
func (h *Host) StopBatch(ctx context.Context, id int64) (api.Batch, error) {
	err := h.st.StopBatch(ctx, id, h.opts.Clock())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return api.Batch{}, fmt.Errorf("%w: %d; GET /v1/batches (durabox batch list) lists them", api.ErrBatchNotFound, id)
	case errors.Is(err, store.ErrFinished):
		b, _ := h.st.GetBatch(ctx, id)
		return api.Batch{}, fmt.Errorf("%w: batch %d is %s already", api.ErrBatchNotRunning, id, b.State)
	case err != nil:
		return api.Batch{}, fmt.Errorf("host: stop batch %d: %w", id, err)
	}
	h.opts.Logger.Info("batch stopped", "batch", id, "by", identity.From(ctx).Name)
	return h.Batch(ctx, id)
}

// batchOf is a stored batch as the API shows it.
func batchOf(b store.Batch) api.Batch {
	var req api.BatchRequest
	json.Unmarshal(b.Args, &req) // what checkBatch wrote; a damaged row shows as the action alone
	req.Action = b.Action
	return api.Batch{ID: b.ID, Action: b.Action, Request: req, Filter: b.Filter, By: b.By, State: string(b.State),
		Matched: b.Matched, Done: b.Done, Failed: b.Failed, Skipped: b.Skipped, LastInstance: b.LastInstance, LastError: b.LastError,
		CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
}
