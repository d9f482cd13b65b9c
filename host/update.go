package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/identity"
	"github.com/durabox/durabox/host/internal/ijson"
	"github.com/durabox/durabox/store"
)

// Update sends the update req.Name, with req.Data (JSON; empty means
// null), to instance id as the update req.ID (empty: the host picks one),
// and waits up to wait for its answer: the handler's result or error, or
// the orchestration's refusal (its validator's, or for want of a handler
// of that name), which leaves no trace in history. It returns the update
// as it stands when the answer comes or the wait ends (State says which).
// An update of an ID the instance has had already runs nothing again: it
// returns that update, and waits for it as for a new one. An instance that
// has finished is refused with ErrFinished; one that ends before the
// handler answers answers the update with a failure saying so.
func (h *Host) Update(ctx context.Context, id string, req api.UpdateRequest, wait time.Duration) (store.Update, error) {
	u, _, err := h.update(ctx, nil, id, req, wait)
	return u, err
}

// StartWithUpdate is update with start: it starts the orchestration name
// with input as instance id (which it must name) on the module ref names,
// as StartOn does, with the update req sent to it in the same
// transaction, or, when instance id exists already, only sends it the
// update; then it waits for the answer as Update does. It reports whether
// it started the instance.
func (h *Host) StartWithUpdate(ctx context.Context, ref, name string, input json.RawMessage, id string, req api.UpdateRequest, wait time.Duration) (store.Update, bool, error) {
	if id == "" {
		return store.Update{}, false, fmt.Errorf("%w: starting with an update needs the instance's id, the instance to update if it exists", api.ErrBadInput)
	}
	n, err := h.newInstance(ctx, ref, name, input, id)
	if err != nil {
		return store.Update{}, false, err
	}
	u, started, err := h.update(ctx, &n, id, req, wait)
	if started {
		h.started(name)
	}
	return u, started, err
}

// update records the update req of instance id (creating the instance
// start first, if not nil and not there) and waits up to wait for its
// answer.
func (h *Host) update(ctx context.Context, start *store.NewInstance, id string, req api.UpdateRequest, wait time.Duration) (store.Update, bool, error) {
	u, err := h.checkUpdate(req)
	if err != nil {
		return u, false, err
	}
	u.By = identity.From(ctx).Name
	sp := h.trace.update(ctx, id, u)
	got, started, err := h.requestUpdate(ctx, start, id, u, wait)
	h.trace.updateEnded(sp, got, err)
	return got, started, err
}

// requestUpdate records the checked update u of instance id, as update
// does, and waits up to wait for its answer.
func (h *Host) requestUpdate(ctx context.Context, start *store.NewInstance, id string, u store.Update, wait time.Duration) (store.Update, bool, error) {
	if err := h.updatable(ctx, start, id); err != nil {
		return u, false, err
	}
	got, started, err := h.st.RequestUpdate(ctx, start, id, u, h.opts.Clock())
	if err := h.enqueued(ctx, id, "update "+abi.Quote(u.Name)+" of", err); err != nil {
		return got, started, err
	}
	if got.Name != u.Name {
		return got, started, fmt.Errorf("%w: %s already had update %s, of %s, not %s: give each update an id of its own", api.ErrBadInput,
			abi.Quote(id), abi.Quote(u.ID), abi.Quote(got.Name), abi.Quote(u.Name))
	}
	got, err = h.AwaitUpdate(ctx, id, got.ID, wait)
	return got, started, err
}

// updatable refuses an update of instance id, or of the instance start
// creates when there is none, when its module takes no updates (built
// before updates existed: it would take the update and never answer).
func (h *Host) updatable(ctx context.Context, start *store.NewInstance, id string) error {
	inst, err := h.st.GetInstance(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) && start != nil:
		inst.ModuleHash = start.ModuleHash
	case errors.Is(err, store.ErrNotFound):
		return api.NotFound(id)
	case err != nil:
		return fmt.Errorf("host: update %s: %w", abi.Quote(id), err)
	}
	mod, err := h.reg.module(ctx, inst.ModuleHash)
	if err != nil {
		return fmt.Errorf("host: update %s: %w", abi.Quote(id), err)
	}
	if !mod.updates {
		return fmt.Errorf("%w: the module of %s, %s, was built before updates existed (its manifest does not say it takes them); "+
			"rebuild it with a current SDK and move the instance to it (durabox upgrade)", api.ErrNotUpdatable, abi.Quote(id), api.Short(inst.ModuleHash))
	}
	return nil
}

// checkUpdate checks an update a client sends and returns it as the store
// takes it.
func (h *Host) checkUpdate(req api.UpdateRequest) (store.Update, error) {
	if err := abi.CheckName("update name", req.Name); err != nil {
		return store.Update{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if req.ID == "" {
		req.ID = newID()
	} else if err := abi.CheckName("update id", req.ID); err != nil {
		return store.Update{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if len(req.Data) == 0 {
		req.Data = json.RawMessage("null")
	}
	if err := checkPayload("the update's data", req.Data, h.opts.MaxPayload); err != nil {
		return store.Update{}, err
	}
	if err := ijson.Check("the update's data", req.Data); err != nil {
		return store.Update{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	return store.Update{ID: req.ID, Name: req.Name, Input: req.Data, RequestedAt: h.opts.Clock()}, nil
}

// AwaitUpdate returns instance id's update of updateID once it is answered,
// or as it stands when wait has passed or ctx is done. On a shared store
// it also looks every sharedPoll, for an update another host answered.
func (h *Host) AwaitUpdate(ctx context.Context, id, updateID string, wait time.Duration) (store.Update, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		changed, stop := h.changed.watch(id)
		u, err := h.st.GetUpdate(ctx, id, updateID)
		if errors.Is(err, store.ErrNotFound) {
			stop()
			return u, fmt.Errorf("%w: %s has no update %s", api.ErrNotFound, abi.Quote(id), abi.Quote(updateID))
		}
		if err != nil || u.State.Answered() {
			stop()
			return u, err
		}
		var poll <-chan time.Time
		if h.opts.Shared {
			poll = time.After(sharedPoll)
		}
		select {
		case <-ctx.Done():
			stop()
			return u, nil
		case <-deadline.C:
			stop()
			return u, nil
		case <-changed:
		case <-poll:
		}
		stop()
	}
}

// refuse commits the refusal of the update the turn of item refused: its
// message is consumed and nothing else changes, so that the instance's
// next turn runs its other messages without it. The turn's guest and
// engine, which applied the update, are gone: that turn replays history
// on a fresh one.
func (h *Host) refuse(ctx context.Context, item *store.WorkItem, r *engine.UpdateRejection, now time.Time) {
	inst := item.Instance
	c := store.TurnCommit{InstanceID: inst.ID, ExecutionID: inst.ExecutionID, LockToken: item.LockToken, Now: now,
		Status: inst.Status, Result: inst.Result, Failure: inst.Failure,
		Consumed: []int64{item.Messages[r.Message].ID}, Refused: &store.RefusedUpdate{UpdateID: r.UpdateID, Failure: r.Failure}}
	if err := h.st.CommitTurn(ctx, c); err != nil {
		h.unlock(ctx, item, "the refusal of update "+abi.Quote(r.UpdateID)+" not committed", err)
		return
	}
	h.metrics.Update("refused")
	h.orchestrationWork.Notify()
	h.changed.notify(inst.ID)
}
