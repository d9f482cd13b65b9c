package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/ijson"
	"github.com/durabox/durabox/host/internal/ops"
	"github.com/durabox/durabox/store"
)

// Query runs the query name with the argument data (JSON; empty means
// null) on instance id, and returns its handler's answer. Nothing is
// written: not to history, not to the store.
//
// The answer comes from the wasm instance this host keeps in memory for
// the instance, when it has one (taken from the live cache for the query,
// as a turn takes it, so that no turn runs on it meanwhile); else from a
// fresh wasm instance on which the execution's committed history is
// replayed first, as a turn does after a restart. That is also how a
// finished instance answers, and one that runs on another host sharing
// the store: its committed history is its state. The wasm instance kept
// in memory answers only if it has applied exactly the committed history
// (not one behind it, nor one a turn put back before its commit: current).
// A wasm instance that answered a query goes back to the cache, while its
// instance runs, for the queries that follow, and no turn runs on it: the
// query changed its heap, which a replay of its history would not
// (live.queried).
//
// It fails with ErrNotFound, ErrBadInput or ErrTooLarge for the request;
// ErrUnknownQuery when the instance handles no query of that name (the
// message lists those it does); ErrQueryFailed when the handler failed,
// tried to change the instance or crashed the guest (the instance is
// unharmed); ErrNotQueryable when the instance cannot answer queries
// (its module predates them, it has not begun, or its module no longer
// replays its history).
func (h *Host) Query(ctx context.Context, id, name string, data json.RawMessage) (json.RawMessage, error) {
	began := time.Now()
	sp := h.trace.query(ctx, id, name)
	out, from, err := h.query(ctx, id, name, data)
	h.metrics.Query(queryOutcome(err), from, time.Since(began))
	h.trace.queryEnded(sp, err)
	return out, err
}

// The ways a query reaches a guest, for the metrics.
const (
	fromLive     = "live"
	fromReplayed = "replayed"
	fromNone     = "none"
)

// queryOutcome names how a query ended, for the metrics.
func queryOutcome(err error) string {
	switch {
	case err == nil:
		return "answered"
	case errors.Is(err, api.ErrUnknownQuery):
		return "unknown"
	case errors.Is(err, errQueryCrashed):
		return "crashed"
	case errors.Is(err, api.ErrQueryFailed):
		return "failed"
	}
	return "refused"
}

// errQueryCrashed marks an ErrQueryFailed whose guest trapped or ran past
// its deadline or budget, for the metrics.
var errQueryCrashed = errors.New("the guest crashed")

func (h *Host) query(ctx context.Context, id, name string, data json.RawMessage) (json.RawMessage, string, error) {
	if err := abi.CheckName("query name", name); err != nil {
		return nil, fromNone, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	if err := checkPayload("the query's argument", data, h.opts.MaxPayload); err != nil {
		return nil, fromNone, err
	}
	if err := ijson.Check("the query's argument", data); err != nil {
		return nil, fromNone, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	inst, res, from, err := h.ask(ctx, id, &abi.QueryRequest{Name: name, Input: data})
	if err != nil && res == nil {
		return nil, from, err
	}
	out, err := h.answer(inst, name, res, err)
	return out, from, err
}

// Handlers returns the names of the queries and the updates instance id
// handles: what its orchestration registered so far, from the answer of
// a query, as Query asks one (so the wasm instance that answers runs no
// turn after it: the next turn replays).
func (h *Host) Handlers(ctx context.Context, id string) (api.Handlers, error) {
	_, res, _, err := h.ask(ctx, id, &abi.QueryRequest{Input: json.RawMessage("null")})
	if err != nil {
		if res != nil {
			err = fmt.Errorf("%w: %w: the handlers of %s: %w", api.ErrQueryFailed, errQueryCrashed, abi.Quote(id), err)
		}
		return api.Handlers{}, err
	}
	for _, names := range [][]string{res.Handlers, res.UpdateHandlers} {
		for _, n := range names {
			if err := abi.CheckName("handler name", n); err != nil {
				return api.Handlers{}, fmt.Errorf("%w: the handlers of %s: the guest's list is refused: %w", api.ErrQueryFailed, abi.Quote(id), err)
			}
		}
	}
	return api.Handlers{Queries: nonNil(res.Handlers), Updates: nonNil(res.UpdateHandlers)}, nil
}

// nonNil is names, or an empty list for none, which JSON shows as [].
func nonNil(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}

// ask runs req on a wasm instance that has applied instance id's
// committed history, and returns the instance as it read it and the
// guest's answer. An error with no answer refuses the request; an error
// with one (an empty one) is the guest's crash.
func (h *Host) ask(ctx context.Context, id string, req *abi.QueryRequest) (store.Instance, *abi.QueryResult, string, error) {
	inst, err := h.st.GetInstance(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return inst, nil, fromNone, api.NotFound(id)
	}
	if err != nil {
		return inst, nil, fromNone, fmt.Errorf("host: query %s: %w", abi.Quote(id), err)
	}
	if err := h.queryable(ctx, inst); err != nil {
		return inst, nil, fromNone, err
	}
	guestCtx := context.WithoutCancel(ctx)
	from, l := fromLive, h.cache.take(id)
	if l != nil {
		switch current := h.current(inst, l); {
		case !current && inst.Status.IsTerminal():
			// Kept from before the turn that ended the instance, which ran
			// on a fresh wasm instance while a query held this one.
			l.close(guestCtx)
			l = nil
		case !current:
			// Behind the store (another host ran a turn) or ahead of it
			// (a turn of this host is committing): the turns judge it.
			h.cache.putBack(guestCtx, id, l)
			l = nil
		}
	}
	if l == nil {
		if l, err = h.replayed(ctx, inst); err != nil {
			return inst, nil, fromNone, err
		}
		from = fromReplayed
	}
	l.queried = true
	res, err := l.guest.Query(req)
	if err != nil || inst.Status.IsTerminal() {
		l.close(guestCtx)
	} else {
		h.cache.putBack(guestCtx, id, l)
	}
	if err != nil {
		res = &abi.QueryResult{}
	}
	return inst, res, from, err
}

// current reports whether l, kept in the live cache for inst, has applied
// exactly the committed history of inst's current execution, so that it
// answers for the state the store has. Every commit of a turn sets the
// instance's UpdatedAt to the turn's time, which the live instance that
// ran it keeps (committedAt): a copy behind the store (another host ran a
// later turn) or ahead of it (its turn has not committed yet) has another.
func (h *Host) current(inst store.Instance, l *live) bool {
	return l.guest != nil && l.moduleHash == inst.ModuleHash && l.execution == inst.ExecutionID && !inst.Status.IsTerminal() &&
		l.committedAt.Equal(inst.UpdatedAt)
}

// queryable refuses a query to inst when its module has no query export
// (it was built before queries existed), or it has not begun.
func (h *Host) queryable(ctx context.Context, inst store.Instance) error {
	mod, err := h.reg.module(ctx, inst.ModuleHash)
	if err != nil {
		return fmt.Errorf("host: query %s: %w", abi.Quote(inst.ID), err)
	}
	if _, ok := slices.BinarySearch(mod.Exports(), abi.ExportQuery); !ok {
		return fmt.Errorf("%w: %s runs on module %s, which was built before queries existed (it has no %s export); "+
			"rebuild it with the current SDK, deploy it and move the instance to it (durabox upgrade), or start a new one",
			api.ErrNotQueryable, abi.Quote(inst.ID), api.Short(inst.ModuleHash), abi.ExportQuery)
	}
	if inst.Status == engine.StatusPending {
		return fmt.Errorf("%w: %s has not begun: it answers queries once its first turn has run", api.ErrNotQueryable, abi.Quote(inst.ID))
	}
	return nil
}

// replayed starts a fresh wasm instance for inst and replays its current
// execution's committed history on it, writing nothing. The history must
// replay exactly, as a turn's would: a module that no longer reproduces
// it cannot answer for it.
func (h *Host) replayed(ctx context.Context, inst store.Instance) (*live, error) {
	history, err := h.st.History(ctx, inst.ID, inst.ExecutionID)
	if err != nil {
		return nil, fmt.Errorf("host: query %s: read its history: %w", abi.Quote(inst.ID), err)
	}
	if len(history) == 0 {
		return nil, fmt.Errorf("%w: %s has no history in its execution %d yet: it answers queries once its first turn has run", api.ErrNotQueryable, abi.Quote(inst.ID), inst.ExecutionID)
	}
	l := h.newLive(context.WithoutCancel(ctx), inst, Seed(inst.ID, inst.ExecutionID, history))
	if l.guest == nil {
		return nil, fmt.Errorf("%w: %s: its module does not start: %w", api.ErrNotQueryable, abi.Quote(inst.ID), l.broken)
	}
	res, err := l.turn(ops.ReplayInput(history))
	switch {
	case err == nil && res.Err != nil:
		err = res.Err
	case err == nil && len(res.NewEvents) > 0:
		err = fmt.Errorf("the replay went past the end of history, to %s", res.NewEvents[0].String())
	}
	if err != nil {
		l.close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w: the history of %s does not replay on its module %s, so the module cannot answer for it: %w",
			api.ErrNotQueryable, abi.Quote(inst.ID), api.Short(inst.ModuleHash), err)
	}
	l.extend(history)
	// The history may hold a commit that came after inst was read; then
	// the next query finds the two apart, and replays again.
	l.committedAt = inst.UpdatedAt
	return l, nil
}

// answer is the client's answer to the query name of inst from the
// guest's result res, or the error of a guest that crashed answering.
func (h *Host) answer(inst store.Instance, name string, res *abi.QueryResult, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, fmt.Errorf("%w: %w: query %s of %s: %w (the instance is unharmed)", api.ErrQueryFailed, errQueryCrashed, abi.Quote(name), abi.Quote(inst.ID), err)
	}
	if !slices.Contains(res.Handlers, name) {
		handles := "no query: the orchestration has registered no query handler (durabox.HandleQuery) so far"
		if len(res.Handlers) > 0 {
			quoted := make([]string, len(res.Handlers))
			for i, n := range res.Handlers {
				quoted[i] = abi.Quote(n)
			}
			handles = strings.Join(quoted, ", ")
		}
		return nil, fmt.Errorf("%w: %s handles no query %s; it handles %s", api.ErrUnknownQuery, abi.Quote(inst.ID), abi.Quote(name), handles)
	}
	if res.Failure != nil {
		if err := abi.CheckText("query failure", res.Failure.Message); err != nil {
			return nil, fmt.Errorf("%w: query %s of %s failed, and its message is refused: %w", api.ErrQueryFailed, abi.Quote(name), abi.Quote(inst.ID), err)
		}
		return nil, fmt.Errorf("%w: query %s of %s: %s", api.ErrQueryFailed, abi.Quote(name), abi.Quote(inst.ID), res.Failure.Message)
	}
	out := json.RawMessage(res.Output)
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	if err := ijson.Check("the query's answer", out); err != nil {
		return nil, fmt.Errorf("%w: query %s of %s: %w", api.ErrQueryFailed, abi.Quote(name), abi.Quote(inst.ID), err)
	}
	if err := checkPayload("the query's answer", out, h.opts.MaxPayload); err != nil {
		return nil, fmt.Errorf("%w: query %s of %s: %w", api.ErrQueryFailed, abi.Quote(name), abi.Quote(inst.ID), err)
	}
	return out, nil
}
