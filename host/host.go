package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/internal/sandbox"
	"github.com/durabox/durabox/store"
)

// Host runs orchestrations from deployed modules on a store.
type Host struct {
	st    store.Store
	opts  Options
	rt    sandbox.Runtime
	reg   *registry
	cache *liveCache
	pool  *activityPool
	// orchestrationWork wakes the orchestration dispatchers, activityWork the
	// activity workers; changed wakes Wait callers when an instance moves.
	orchestrationWork, activityWork wakeup
	changed                         *signal
}

// New returns a host on st. The host does not own st: close it after the
// host.
func New(st store.Store, opts Options) (*Host, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	rt, err := newRuntime(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	h := &Host{
		st: st, opts: opts, rt: rt,
		reg:               newRegistry(rt, st),
		cache:             newLiveCache(opts.MaxLiveInstances, opts.MaxLiveMemory),
		orchestrationWork: newWakeup(), activityWork: newWakeup(), changed: newSignal(),
	}
	h.pool = newActivityPool(h)
	return h, nil
}

// newRuntime starts the wasm runtime opts ask for.
func newRuntime(ctx context.Context, opts Options) (sandbox.Runtime, error) {
	rt, err := sandbox.NewWazero(ctx, sandbox.WazeroOptions{CacheDir: opts.CacheDir, MemoryLimitBytes: opts.MemoryLimit})
	if err != nil {
		return nil, fmt.Errorf("host: start the wasm runtime: %w", err)
	}
	return rt, nil
}

// Run runs the dispatchers until ctx is done, then waits for the turns and
// activities in progress to end. Work left unfinished is picked up by the
// next Run on the same store.
func (h *Host) Run(ctx context.Context) error {
	if err := h.st.ReleaseAllLeases(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("host: release leases left by an earlier run: %w", err)
	}
	h.warm(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { h.dispatchOrchestrations(ctx) })
	wg.Go(func() { h.dispatchActivities(ctx) })
	wg.Wait()
	return nil
}

// warm loads the modules that the work waiting in the store runs on, before
// any of it is taken. Work is counted as delivered when it is taken, so a
// host killed while it was still loading a module would otherwise count a
// delivery for work it never ran, and work could be given up on as poison
// without ever having run. A module that fails to load is left to the work
// that needs it, which reports why.
func (h *Host) warm(ctx context.Context) {
	hashes, err := h.st.ModulesWithWork(ctx)
	if err != nil {
		h.opts.Logger.Warn("cannot list the modules with work; each loads when first needed", "err", err)
		return
	}
	var wg sync.WaitGroup
	for _, hash := range hashes {
		wg.Go(func() { h.reg.module(ctx, hash) })
	}
	wg.Wait()
}

// Close releases the wasm runtime and every live instance. Call it after Run
// has returned.
func (h *Host) Close() error {
	ctx := context.Background()
	h.cache.closeAll(ctx)
	h.pool.close(ctx)
	h.reg.close(ctx)
	return h.rt.Close(ctx)
}

// Deploy validates and stores a module, with the environment variables
// ("KEY=value") its activities see; orchestrations see none. It refuses
// (with ErrBadModule) bytes that are not wasm, a module without the guest
// SDK's exports or of another ABI version, and a module that imports
// functions the host lacks; a refused module is not stored. Deploying a
// module again replaces its environment.
func (h *Host) Deploy(ctx context.Context, wasm []byte, env []string) (store.ModuleInfo, error) {
	info, err := h.reg.deploy(ctx, wasm, env)
	if err == nil {
		h.opts.Logger.Info("module deployed", "hash", short(info.Hash), "orchestrations", info.Orchestrations, "activities", info.Activities)
	}
	return info, err
}

var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// Start starts the orchestration name with input (JSON; empty means null)
// and returns the instance id. An empty id means the host picks one. The
// instance runs on the module most recently deployed that registers name,
// and stays on it unless an upgrade or a reset moves it.
func (h *Host) Start(ctx context.Context, name string, input json.RawMessage, id string) (string, error) {
	return h.StartOn(ctx, "", name, input, id)
}

// StartOn is Start on the module ref names: a hash or a unique prefix of
// one, which must register name. Empty means the newest that does.
func (h *Host) StartOn(ctx context.Context, ref, name string, input json.RawMessage, id string) (string, error) {
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	if !json.Valid(input) {
		return "", fmt.Errorf("%w: the input is not valid JSON: %.100s", ErrBadInput, input)
	}
	if id == "" {
		id = newID()
	} else if !validID.MatchString(id) {
		return "", fmt.Errorf("%w: instance id %q must be 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit", ErrBadInput, id)
	}
	hash, err := h.startModule(ctx, ref, name)
	if err != nil {
		return "", err
	}
	err = h.st.CreateInstance(ctx, store.NewInstance{ID: id, Name: name, ModuleHash: hash, Input: input, Now: h.opts.Clock()})
	if errors.Is(err, store.ErrInstanceExists) {
		return "", fmt.Errorf("%w: %q", ErrInstanceExists, id)
	}
	if err != nil {
		return "", fmt.Errorf("host: start %q: %w", name, err)
	}
	h.orchestrationWork.Notify()
	return id, nil
}

// startModule returns the module a new instance of name starts on.
func (h *Host) startModule(ctx context.Context, ref, name string) (string, error) {
	if ref != "" {
		mod, err := h.resolveModule(ctx, ref)
		if err != nil {
			return "", err
		}
		if !slices.Contains(mod.Orchestrations, name) {
			return "", fmt.Errorf("%w %q on module %s, which registers %s", ErrUnknownOrchestration, name, short(mod.Hash), names(mod.Orchestrations))
		}
		return mod.Hash, nil
	}
	hash, err := h.st.ModuleFor(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%w %q: no deployed module registers it; deploy one with `durabox deploy FILE.wasm`", ErrUnknownOrchestration, name)
	}
	if err != nil {
		return "", fmt.Errorf("host: start %q: %w", name, err)
	}
	return hash, nil
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Raise raises the external event name with data (JSON; empty means null)
// for an instance. A positional event goes to the oldest wait for it that is
// active when the instance takes the event, and is dropped if there is none;
// a persistent one waits in the instance's mailbox for a persistent wait
// (at most 20 per execution).
func (h *Host) Raise(ctx context.Context, id, name string, data json.RawMessage, persistent bool) error {
	if name == "" {
		return fmt.Errorf("%w: an event needs a name", ErrBadInput)
	}
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	if !json.Valid(data) {
		return fmt.Errorf("%w: the event's data is not valid JSON: %.100s", ErrBadInput, data)
	}
	kind := engine.ExternalEvent
	if persistent {
		kind = engine.ExternalEventPersistent
	}
	err := h.st.Enqueue(ctx, id, engine.Event{Kind: kind, Name: name, Result: data})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("host: raise %q for %q: %w", name, id, err)
	}
	h.orchestrationWork.Notify()
	return nil
}

// Cancel requests the cancellation of an instance, for reason. The
// orchestration sees it: the operations it waits on are cancelled (activities
// get cancel requests, timers stop, children are cancelled in turn) and fail
// with a cancellation error, and it may clean up before it ends. An instance
// that then fails ends Canceled.
func (h *Host) Cancel(ctx context.Context, id, reason string) error {
	err := h.st.Enqueue(ctx, id, engine.Event{Kind: engine.OrchestrationCancelRequested, Reason: reason})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("host: cancel %q: %w", id, err)
	}
	h.orchestrationWork.Notify()
	return nil
}

// Instance returns an instance's state.
func (h *Host) Instance(ctx context.Context, id string) (store.Instance, error) {
	inst, err := h.st.GetInstance(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return inst, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return inst, err
}

// Purge deletes a finished instance (Completed, Failed or Canceled) with
// the history of every execution and whatever still waits for it (raised
// events, timers, activity tasks), and frees its id for a new instance. Its
// children live on; a child it waited for no longer reports to it. An
// instance that has not finished is refused with ErrNotFinished: cancel it
// first, or wait for it to end. Purging is for good: the history is not kept
// anywhere else.
func (h *Host) Purge(ctx context.Context, id string) error {
	err := h.st.Purge(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	case errors.Is(err, store.ErrNotFinished):
		return fmt.Errorf("%w: %q has not ended; cancel it or wait for it to end, then purge it", ErrNotFinished, id)
	case err != nil:
		return fmt.Errorf("host: purge %q: %w", id, err)
	}
	h.opts.Logger.Info("instance purged", "instance", id)
	return nil
}

// Wait blocks until the instance reaches a terminal status or ctx is done,
// and returns the instance as it stands then.
func (h *Host) Wait(ctx context.Context, id string) (store.Instance, error) {
	for {
		changed := h.changed.C()
		inst, err := h.Instance(context.WithoutCancel(ctx), id)
		if err != nil || inst.Status.IsTerminal() {
			return inst, err
		}
		select {
		case <-ctx.Done():
			return inst, nil
		case <-changed:
		}
	}
}

// History returns the history of an instance's current execution.
func (h *Host) History(ctx context.Context, id string) ([]engine.Event, error) {
	return h.ExecutionHistory(ctx, id, 0)
}

// ExecutionHistory returns the history of one execution of an instance, from
// 1; 0 means the current one. Executions that continued as new keep theirs.
func (h *Host) ExecutionHistory(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	events, err := h.st.History(ctx, id, execution)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return events, err
}

// List returns instances, newest first.
func (h *Host) List(ctx context.Context) ([]store.Instance, error) { return h.st.ListInstances(ctx) }

// Modules returns the deployed modules, newest first.
func (h *Host) Modules(ctx context.Context) ([]store.ModuleInfo, error) {
	return h.st.ListModules(ctx)
}

// idle waits until woken, until the store's next message is due, or for at
// most a second (to notice expired leases), whichever is first.
func (h *Host) idle(ctx context.Context, wake wakeup) {
	d := time.Second
	if next, ok, err := h.st.NextVisibleAt(ctx, h.opts.Clock()); err == nil && ok {
		d = min(d, max(time.Until(next), 0))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	}
}
