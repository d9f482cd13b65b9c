package fakehost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// UpdateHandler is a fake update handler: it answers the update of
// instance id with argument data, or fails it with an error; with
// ErrStillRunning, the update stays Accepted, unanswered.
type UpdateHandler func(id string, data json.RawMessage) (json.RawMessage, error)

// HandleUpdate gives every instance the update name, answered by fn.
func (h *Host) HandleUpdate(name string, fn UpdateHandler) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.updateHandlers[name] = fn
}

// Update runs the handler HandleUpdate gave for req.Name at once, as a
// host runs one: an update of an id the instance has had returns that one
// and runs nothing; a name no handler has is Refused. It does not wait:
// an update a handler leaves unanswered (ErrStillRunning) is returned
// Accepted.
func (h *Host) Update(ctx context.Context, id string, req api.UpdateRequest, wait time.Duration) (store.Update, error) {
	if err := h.failure("Update"); err != nil {
		return store.Update{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.ID == "" {
		req.ID = fmt.Sprintf("update%d", len(h.updates)+1)
	}
	key := id + "/" + req.ID
	if u, ok := h.updates[key]; ok {
		return u, nil
	}
	if err := h.running(id); err != nil {
		return store.Update{}, err
	}
	u := store.Update{InstanceID: id, ID: req.ID, Name: req.Name, Input: req.Data, State: store.UpdateAccepted, RequestedAt: h.tick()}
	fn, ok := h.updateHandlers[req.Name]
	switch {
	case !ok:
		u.State, u.Failure = store.UpdateRefused, &engine.Failure{Message: fmt.Sprintf("the instance handles no update %q (it handles %q)", req.Name, slices.Sorted(maps.Keys(h.updateHandlers)))}
	default:
		out, err := fn(id, req.Data)
		switch {
		case errors.Is(err, ErrStillRunning):
		case err != nil:
			u.State, u.Failure = store.UpdateFailed, &engine.Failure{Message: err.Error()}
		default:
			u.State, u.Result = store.UpdateCompleted, out
		}
	}
	if u.State.Answered() {
		u.AnsweredAt = h.tick()
	}
	h.updates[key] = u
	return u, nil
}

// StartWithUpdate starts instance id, unless it exists, then updates it.
func (h *Host) StartWithUpdate(ctx context.Context, module, name string, input json.RawMessage, id string, req api.UpdateRequest, wait time.Duration) (store.Update, bool, error) {
	h.mu.Lock()
	_, exists := h.find(id)
	h.mu.Unlock()
	if !exists {
		if _, err := h.StartOn(ctx, module, name, input, id); err != nil {
			return store.Update{}, false, err
		}
	}
	u, err := h.Update(ctx, id, req, wait)
	return u, !exists, err
}

// Handlers lists the query and update handlers every instance has.
func (h *Host) Handlers(ctx context.Context, id string) (api.Handlers, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.find(id); !ok {
		return api.Handlers{}, api.NotFound(id)
	}
	return api.Handlers{Queries: slices.Sorted(maps.Keys(h.queries)), Updates: slices.Sorted(maps.Keys(h.updateHandlers))}, nil
}

// AwaitUpdate returns the update as it stands: the fake's handlers answer
// at once, or never.
func (h *Host) AwaitUpdate(ctx context.Context, id, updateID string, wait time.Duration) (store.Update, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	u, ok := h.updates[id+"/"+updateID]
	if !ok {
		return u, fmt.Errorf("%w: %q has no update %q", api.ErrNotFound, id, updateID)
	}
	return u, nil
}
