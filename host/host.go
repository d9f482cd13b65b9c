package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/guard"
	"github.com/durabox/durabox/host/internal/identity"
	"github.com/durabox/durabox/host/internal/ijson"
	"github.com/durabox/durabox/host/internal/ops"
	"github.com/durabox/durabox/host/internal/sandbox"
	"github.com/durabox/durabox/host/metrics"
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
	// attempts are the activity attempts running, to stop.
	attempts *attempts
	// queues are the task queues workers outside the host poll
	// (workers.go).
	queues  *queues
	metrics *metrics.Metrics
	// guard recovers the panics of the host's own code at its boundaries
	// (panics.go).
	guard guard.Guard
	// orchestrationWork wakes the orchestration dispatchers, activityWork the
	// activity workers; changed wakes Wait callers when an instance moves.
	orchestrationWork, activityWork wakeup
	// turns and tasks are the work this host's commits took for its
	// orchestration and activity workers (handoff.go); handoffs is the
	// store's way to take it, nil when it has none.
	turns    *handoff[store.WorkItem]
	tasks    *handoff[leasedTask]
	handoffs store.Handoff
	// watcher tells of the work other hosts make, on a shared store that
	// can (nil otherwise).
	watcher store.Watcher
	changed *changes
	// scheduleWork wakes the scheduler (scheduler.go); scheduleErrs holds
	// the text of each schedule's last error, to log it once.
	scheduleWork wakeup
	scheduleErrs sync.Map
	// batchWork wakes the batch runner (batchrun.go).
	batchWork wakeup
	// ops carries out the operations that are not turns (operations.go).
	ops *ops.Ops
	// state is where Run is: notRunning, warming, running or stopped.
	state atomic.Int32
	// unwritable is set once the disk refused a write (full, or failing),
	// until the store can write again (unwritable.go).
	unwritable atomic.Bool
	// trace exports spans; nil when Options.TraceExporter is (tracing.go).
	trace *tracing
}

// The states of a host, for Ready.
const (
	notRunning int32 = iota
	warming
	running
	stopped
)

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
	g := guard.Guard{Log: opts.Logger, Count: opts.Metrics.Panic}
	h := &Host{
		st: st, opts: opts, rt: rt, metrics: opts.Metrics, guard: g,
		reg:               newRegistry(rt, st, opts, g),
		cache:             newLiveCache(opts.MaxLiveInstances, opts.MaxLiveMemory),
		attempts:          newAttempts(opts.CancelGrace),
		queues:            newQueues(),
		trace:             newTracing(opts.TraceExporter, opts.Clock),
		orchestrationWork: newWakeup(), activityWork: newWakeup(), changed: newChanges(), scheduleWork: newWakeup(), batchWork: newWakeup(),
		turns: newHandoff[store.WorkItem](), tasks: newHandoff[leasedTask](),
	}
	h.handoffs, _ = st.(store.Handoff)
	if opts.Shared {
		h.watcher, _ = st.(store.Watcher)
	}
	h.pool = newActivityPool(h)
	h.ops = ops.New(st, opsRuntime{h}, ops.Options{Clock: opts.Clock, Logger: opts.Logger, Retention: opts.Retention, SweepInterval: opts.SweepInterval, Guard: g})
	if err := h.metrics.Register(hostCollector{h}); err != nil {
		rt.Close(context.Background())
		return nil, err
	}
	return h, nil
}

// The runtimes Options.Runtime names.
const (
	RuntimeWazero   = "wazero"
	RuntimeWasmtime = "wasmtime"
)

// newRuntime starts the wasm runtime opts ask for.
func newRuntime(ctx context.Context, opts Options) (sandbox.Runtime, error) {
	start := sandbox.NewWazero
	if opts.Runtime == RuntimeWasmtime {
		start = sandbox.NewWasmtime
	}
	rt, err := start(ctx, sandbox.Options{CacheDir: opts.CacheDir, MemoryLimitBytes: opts.MemoryLimit})
	if err != nil {
		return nil, fmt.Errorf("host: start the wasm runtime: %w", err)
	}
	return rt, nil
}

// Run runs the dispatchers, the scheduler and the batch runner (and, with Options.Retention,
// the sweeps) until ctx is done, then waits for the turns and activities in progress to end.
// Work left unfinished is picked up by the next Run on the same store; what
// the end of ctx cut short is no failure, and is logged at INFO.
func (h *Host) Run(ctx context.Context) error {
	h.state.Store(warming)
	defer h.state.Store(stopped)
	if err := h.st.ReleaseAllLeases(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("host: release leases left by an earlier run: %w", err)
	}
	h.warm(ctx)
	if h.watcher != nil {
		h.watcher.Watch(ctx, h.ready)
	}
	h.state.Store(running)
	var wg sync.WaitGroup
	wg.Go(func() { h.dispatchOrchestrations(ctx) })
	wg.Go(func() { h.dispatchActivities(ctx) })
	wg.Go(func() { h.ops.Sweeps(ctx) })
	wg.Go(func() { h.runSchedules(ctx) })
	wg.Go(func() { h.runBatches(ctx) })
	wg.Wait()
	return nil
}

// ready wakes what waits for the work another host made ready
// (store.Watcher).
func (h *Host) ready(r store.Ready) {
	if r.Turns {
		h.orchestrationWork.Notify()
	}
	if r.Activities {
		h.activityWork.Notify()
	}
	for _, q := range r.Queues {
		h.queues.queued.notify(q)
	}
}

// warm loads the modules that the work waiting in the store runs on, before
// any of it is taken. Work is counted as delivered when it is taken, so a
// host killed while it was still loading a module would otherwise count a
// delivery for work it never ran, and work could be given up on as poison
// without ever having run. A module this host cannot run is found here,
// said once in the log, and its work passed over from the first fetch
// (refused.go); one that fails to load otherwise is left to the work that
// needs it.
func (h *Host) warm(ctx context.Context) {
	hashes, err := h.st.ModulesWithWork(ctx)
	if cutShort(ctx, err) {
		return
	}
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

// Ready returns nil when the host serves its work: Run has loaded the
// modules its waiting work runs on, and the store answers within 2s.
// Otherwise it returns ErrNotReady, saying which is not so.
func (h *Host) Ready(ctx context.Context) error {
	switch h.state.Load() {
	case notRunning:
		return fmt.Errorf("%w: the host is not running", api.ErrNotReady)
	case warming:
		return fmt.Errorf("%w: the host is starting: it loads the modules its waiting work runs on", api.ErrNotReady)
	case stopped:
		return fmt.Errorf("%w: the host has stopped", api.ErrNotReady)
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := h.st.Ping(ctx); err != nil {
		return fmt.Errorf("%w: the store does not answer: %w", api.ErrNotReady, err)
	}
	return nil
}

// readyTimeout bounds Ready's ping of the store: a database the host is cut
// off from makes it hang (until the connection is found dead, 10 seconds
// on PostgreSQL), and a probe wants its answer sooner.
const readyTimeout = 2 * time.Second

// traceFlushTimeout bounds how long Close waits to export the spans left,
// to a collector that may not answer.
const traceFlushTimeout = 5 * time.Second

// Close releases the wasm runtime and every live instance, and exports the
// spans left (Options.TraceExporter). Call it after Run has returned.
func (h *Host) Close() error {
	ctx := context.Background()
	h.cache.closeAll(ctx)
	h.pool.close(ctx)
	h.reg.close(ctx)
	flushCtx, cancel := context.WithTimeout(ctx, traceFlushTimeout)
	defer cancel()
	traceErr := h.trace.close(flushCtx)
	if traceErr != nil {
		traceErr = fmt.Errorf("host: export the last spans: %w", traceErr)
	}
	return errors.Join(h.rt.Close(ctx), traceErr)
}

// Deploy validates and stores a module. It refuses (with ErrBadModule)
// bytes that are not wasm, a module without the guest SDK's exports or of
// another ABI version, and a module that imports functions the host lacks;
// a refused module is not stored. A module deployed again keeps the
// environment its activities see (a new one has none): DeployWithEnv
// replaces it.
func (h *Host) Deploy(ctx context.Context, wasm []byte) (store.ModuleInfo, error) {
	return h.deploy(ctx, wasm, nil, false)
}

// DeployWithEnv is Deploy with the environment variables ("KEY=value") its
// activities see, which replace those of an earlier deployment of the
// module: none clears them. Orchestrations see none.
func (h *Host) DeployWithEnv(ctx context.Context, wasm []byte, env []string) (store.ModuleInfo, error) {
	return h.deploy(ctx, wasm, env, true)
}

func (h *Host) deploy(ctx context.Context, wasm []byte, env []string, replaceEnv bool) (store.ModuleInfo, error) {
	info, err := h.reg.deploy(ctx, wasm, env, replaceEnv, h.opts.Clock())
	if err == nil {
		// The values of the environment are secrets: only their names are
		// logged.
		h.opts.Logger.Info("module deployed", "hash", api.Short(info.Hash), "orchestrations", info.Orchestrations, "activities", info.Activities, "env", info.EnvKeys())
	}
	return info, err
}

// Start starts the orchestration name with input (JSON; empty means null)
// and returns the instance id. An empty id means the host picks one. The
// instance runs on the module most recently deployed that registers name,
// and stays on it unless an upgrade or a reset moves it. When a worker of
// orchestrations is idle, the instance's first turn runs before Start
// returns, in that worker's place, and commits with the instance: the
// instance is written once it has begun (store.Handoff.CreateAndTurn).
func (h *Host) Start(ctx context.Context, name string, input json.RawMessage, id string) (string, error) {
	return h.StartOn(ctx, "", name, input, id)
}

// StartOn is Start on the module ref names: a hash or a unique prefix of
// one, which must register name. Empty means the newest that does. A
// start through the API commits its audit record, which ctx carries from
// the server, with the instance (package host/internal/identity's Record).
func (h *Host) StartOn(ctx context.Context, ref, name string, input json.RawMessage, id string) (string, error) {
	n, err := h.newInstance(ctx, ref, name, input, id)
	if err != nil {
		return "", err
	}
	rec := identity.RecordFrom(ctx)
	n.Audit = rec.For(n.ID, n.Now)
	err = h.create(ctx, n)
	if errors.Is(err, store.ErrInstanceExists) {
		return "", fmt.Errorf("%w: %q", api.ErrInstanceExists, n.ID)
	}
	if err != nil {
		return "", fmt.Errorf("host: start %q: %w", name, err)
	}
	rec.Committed()
	return n.ID, nil
}

// create creates the instance n. On a store with handoffs, when an
// orchestration worker is idle, the instance commits with its first turn,
// which runs here in that worker's place (createTurned), or, when that
// turn cannot commit, is created locked for this host and its first turn
// handed to that worker (handoff.go); otherwise its start waits in the
// store, for any host.
func (h *Host) create(ctx context.Context, n store.NewInstance) error {
	if h.handoffs == nil || slices.Contains(h.reg.skipped(), n.ModuleHash) || h.turns.reserve(1) == 0 {
		if err := h.st.CreateInstance(ctx, n); err != nil {
			return err
		}
		h.started(n.Name)
		return nil
	}
	if turned, err := h.createTurned(ctx, n); turned || err != nil {
		h.turns.give(1)
		if err == nil {
			h.metrics.Started(n.Name)
		}
		return err
	}
	item, err := h.handoffs.CreateLocked(ctx, n, h.opts.Lease)
	if err != nil {
		h.turns.give(1)
		return err
	}
	h.turns.give(1, item)
	h.metrics.Started(n.Name)
	return nil
}

// StartWithEvent is signal with start: it starts the orchestration name
// with input as instance id (which it must name) on the module ref names,
// as StartOn does, with the event ev raised at it in the same transaction,
// or, when instance id exists already, only raises ev at it, as Raise
// does (ErrFinished, ErrTooManyEvents). It reports whether it started the
// instance. The instance there may be of another orchestration: the
// event is raised at it all the same. A start through the API that
// creates the instance commits its audit record with it, as StartOn does.
func (h *Host) StartWithEvent(ctx context.Context, ref, name string, input json.RawMessage, id string, ev api.RaiseRequest) (bool, error) {
	if id == "" {
		return false, fmt.Errorf("%w: starting with an event needs the instance's id, the instance to raise the event at if it exists", api.ErrBadInput)
	}
	msg, err := h.event(ctx, ev.Name, ev.Data, ev.Persistent)
	if err != nil {
		return false, err
	}
	n, err := h.newInstance(ctx, ref, name, input, id)
	if err != nil {
		return false, err
	}
	rec := identity.RecordFrom(ctx)
	n.Audit = rec.For(n.ID, n.Now)
	created, err := h.st.CreateWithEvent(ctx, n, msg, h.persistentMax(ev.Persistent))
	if err = h.raised(ctx, id, ev.Name, err); err != nil {
		return false, err
	}
	if created {
		rec.Committed()
		h.started(name)
	}
	return created, nil
}

// newInstance checks a start's name, input and id (an empty id gets one
// of the host's choosing) and returns the instance it creates, on the
// module ref names.
func (h *Host) newInstance(ctx context.Context, ref, name string, input json.RawMessage, id string) (store.NewInstance, error) {
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	if err := checkPayload("the input", input, h.opts.MaxPayload); err != nil {
		return store.NewInstance{}, err
	}
	if err := abi.CheckName("orchestration name", name); err != nil {
		return store.NewInstance{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if err := ijson.Check("the input", input); err != nil {
		return store.NewInstance{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if id == "" {
		id = newID()
	} else if abi.CheckInstanceID(id) != nil {
		return store.NewInstance{}, fmt.Errorf("%w: instance id %s must be 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit", api.ErrBadInput, abi.Quote(id))
	}
	hash, err := h.startModule(ctx, ref, name)
	if err != nil {
		return store.NewInstance{}, err
	}
	return store.NewInstance{ID: id, Name: name, ModuleHash: hash, Input: input, Now: h.opts.Clock(), By: identity.From(ctx).Name}, nil
}

// started counts a new instance of name and wakes a worker for it.
func (h *Host) started(name string) {
	h.metrics.Started(name)
	h.orchestrationWork.Notify()
}

// startModule returns the module a new instance of name starts on.
func (h *Host) startModule(ctx context.Context, ref, name string) (string, error) {
	if ref != "" {
		mod, err := h.ops.ResolveModule(ctx, ref)
		if err != nil {
			return "", err
		}
		if !slices.Contains(mod.Orchestrations, name) {
			return "", fmt.Errorf("%w %q on module %s, which registers %s", api.ErrUnknownOrchestration, name, api.Short(mod.Hash), ops.Names(mod.Orchestrations))
		}
		return mod.Hash, nil
	}
	hash, err := h.st.ModuleFor(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%w %q: no deployed module registers it; deploy one with `durabox deploy FILE.wasm`", api.ErrUnknownOrchestration, name)
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
// a persistent one waits in the instance's mailbox for a persistent wait.
// An execution takes Options.MaxPersistentEvents persistent events: one
// past them is refused with ErrTooManyEvents, not accepted and dropped. An
// instance that has finished is refused with ErrFinished.
func (h *Host) Raise(ctx context.Context, id, name string, data json.RawMessage, persistent bool) error {
	ev, err := h.event(ctx, name, data, persistent)
	if err != nil {
		return err
	}
	return h.raised(ctx, id, name, h.enqueue(ctx, id, ev))
}

// enqueue enqueues ev for instance id, a persistent event within
// Options.MaxPersistentEvents, with the audit record ctx carries from
// the API's server in the same transaction (identity.Record); it returns
// the store's error.
func (h *Host) enqueue(ctx context.Context, id string, ev engine.Event) error {
	rec, now := identity.RecordFrom(ctx), h.opts.Clock()
	var err error
	if ev.Kind == engine.ExternalEventPersistent {
		err = h.st.EnqueuePersistent(ctx, id, ev, h.opts.MaxPersistentEvents, now, rec.For(id, now))
	} else {
		err = h.st.Enqueue(ctx, id, ev, now, rec.For(id, now))
	}
	if err == nil {
		rec.Committed()
	}
	return err
}

// event checks an event raised from outside and returns its message: an
// ExternalEvent, or an ExternalEventPersistent, by whom ctx names.
func (h *Host) event(ctx context.Context, name string, data json.RawMessage, persistent bool) (engine.Event, error) {
	if err := abi.CheckName("event name", name); err != nil {
		return engine.Event{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	if err := checkPayload("the event's data", data, h.opts.MaxPayload); err != nil {
		return engine.Event{}, err
	}
	if err := ijson.Check("the event's data", data); err != nil {
		return engine.Event{}, fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	ev := engine.Event{Kind: engine.ExternalEvent, Name: name, Result: data, By: identity.From(ctx).Name}
	if persistent {
		ev.Kind = engine.ExternalEventPersistent
	}
	return ev, nil
}

// persistentMax is the max of the store's enqueue of an event: 0 for a
// positional one.
func (h *Host) persistentMax(persistent bool) int {
	if persistent {
		return h.opts.MaxPersistentEvents
	}
	return 0
}

// raised returns the error of the store's enqueue of the event name for
// instance id, in the API's words.
func (h *Host) raised(ctx context.Context, id, name string, err error) error {
	if errors.Is(err, store.ErrTooManyEvents) {
		return fmt.Errorf("%w: %q already has %d persistent events taken or waiting, as many as an execution takes; "+
			"raise it once the orchestration has taken some, or after it continues as new", api.ErrTooManyEvents, id, h.opts.MaxPersistentEvents)
	}
	return h.enqueued(ctx, id, "raise "+abi.Quote(name)+" for", err)
}

// Cancel requests the cancellation of an instance, for reason. The
// orchestration sees it: the operations it waits on are cancelled (activities
// get cancel requests, timers stop, children are cancelled in turn) and fail
// with a cancellation error, and it may clean up before it ends. An instance
// that then fails ends Canceled. An instance that has finished is refused
// with ErrFinished.
func (h *Host) Cancel(ctx context.Context, id, reason string) error {
	if err := abi.CheckReason("cancel reason", reason); err != nil {
		return fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	err := h.enqueue(ctx, id, engine.Event{Kind: engine.OrchestrationCancelRequested, Reason: reason, By: identity.From(ctx).Name})
	return h.enqueued(ctx, id, "cancel", err)
}

// Terminate ends an instance at its next turn, for reason, without its
// cooperation: the orchestration runs no more, and history records an
// OrchestrationTerminated. Its children still running are terminated with
// it (instances it started detached live on); its activities not yet
// started and its timers are dropped, and the results of those running
// are ignored. Its parent, if it has one waiting, sees it fail. An
// instance that has finished is refused with ErrFinished.
func (h *Host) Terminate(ctx context.Context, id, reason string) error {
	if err := abi.CheckReason("terminate reason", reason); err != nil {
		return fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	err := h.enqueue(ctx, id, engine.Event{Kind: engine.OrchestrationTerminated, Reason: reason, By: identity.From(ctx).Name})
	return h.enqueued(ctx, id, "terminate", err)
}

// enqueued reports how a message for instance id went (op names it), and
// announces it.
func (h *Host) enqueued(ctx context.Context, id, op string, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return api.NotFound(id)
	case errors.Is(err, store.ErrFinished):
		status := "finished"
		if inst, err := h.st.GetInstance(ctx, id); err == nil {
			status = string(inst.Status)
		}
		return fmt.Errorf("%w: %s is %s; nothing more can happen to it", api.ErrFinished, abi.Quote(id), status)
	case err != nil:
		return fmt.Errorf("host: %s %s: %w", op, abi.Quote(id), err)
	}
	h.orchestrationWork.Notify()
	return nil
}

// Wait blocks until the instance reaches a terminal status or ctx is done,
// and returns the instance as it stands then. On a shared store it also
// looks every sharedPoll, for an instance another host ran.
func (h *Host) Wait(ctx context.Context, id string) (store.Instance, error) {
	for {
		inst, done, err := h.awaitChange(ctx, id)
		if done || err != nil {
			return inst, err
		}
	}
}

// awaitChange reads instance id and, unless it has finished, waits until
// a change that may have ended it, a poll is due on a shared store, or
// ctx is done (done: stop waiting; the instance is read again, as the
// turns that left it running woke nobody).
func (h *Host) awaitChange(ctx context.Context, id string) (inst store.Instance, done bool, err error) {
	changed, stop := h.changed.watchEnd(id)
	defer stop()
	inst, err = h.Instance(context.WithoutCancel(ctx), id)
	if err != nil || inst.Status.IsTerminal() {
		return inst, true, err
	}
	var poll <-chan time.Time
	if h.opts.Shared {
		poll = time.After(sharedPoll)
	}
	select {
	case <-ctx.Done():
		inst, err = h.Instance(context.WithoutCancel(ctx), id)
		return inst, true, err
	case <-changed:
	case <-poll:
	}
	return inst, false, nil
}

// cutShort reports whether err is what the end of ctx made of a call: the
// host is stopping, or a request ended, which cut the call short. That is
// no failure: a turn or an activity cut short runs again at the next
// start.
func cutShort(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// sharedPoll is how often Wait, on a shared store, looks for changes
// other hosts made.
const sharedPoll = time.Second

// listeningPoll is how often an idle dispatcher looks for work while the
// store tells it of the other hosts' (Options.Poll), unless the lease is
// shorter (idle).
const listeningPoll = time.Minute

// dueAt is when the store's next message is due, as an idle dispatcher
// last read it (ok false: none is, or the store could not tell).
type dueAt struct {
	at time.Time
	ok bool
}

// idle waits until woken, until the store's next message is due, or for at
// most Options.Poll (to notice the work other hosts make on a shared
// store; while the store tells of it, listeningPoll, or the lease if that
// is shorter), whichever is first. It reports whether it was woken by work
// handed over (handoff.go) and nothing else.
//
// It asks the store when its next message is due only when reread is
// set, and keeps the answer in due for the idles that follow: an idle
// woken by work handed over and nothing else passes reread false. What
// it was handed (a start or a task of this host's own commit) adds only
// the end of its own lease, which this host, while it runs, does not
// wait for (its attempts time out by themselves); every commit that
// makes something come due (a timer, a retry, another host's work)
// wakes it, and the idle after that asks again.
func (h *Host) idle(ctx context.Context, wake, handed wakeup, due *dueAt, reread bool) (handedOnly bool) {
	d := h.opts.Poll
	if h.watcher != nil && h.watcher.Listening() {
		// Nothing is announced of the work a host leases to itself as it
		// makes it, and the leases a host that died held end unannounced:
		// the others learn when from NextVisibleAt, read at least once a
		// lease, so that they take such work within two leases of its
		// host's death, as they would with a lease as long as the poll.
		d = max(d, min(listeningPoll, h.opts.Lease))
	}
	if reread {
		var err error
		due.at, due.ok, err = h.st.NextVisibleAt(ctx, h.opts.Clock())
		due.ok = due.ok && err == nil
	}
	if due.ok {
		d = min(d, max(time.Until(due.at), 0))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	case <-handed:
		return true
	}
	return false
}
