package host

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/internal/sandbox"
	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/store"
)

// live is an orchestration instance kept in memory between turns: its
// engine state, the wasm instance that has applied its history so far, and
// that history, so that a turn reads only its new messages from the store.
type live struct {
	moduleHash string
	execution  int64
	history    []engine.Event
	// historyBytes is roughly the memory history holds.
	historyBytes uint64
	// exec is the engine's side of the execution, which guest applies
	// alongside; guest is nil when it could not start, and broken says why.
	exec   *engine.Execution
	guest  *orchestrationGuest
	broken error
	// resident is its guest's memory as last measured, when the linear
	// memory was residentOf bytes, and turns how many turns it has been put
	// back since (memory).
	resident, residentOf uint64
	turns                int
}

// continues reports whether l has applied exactly the persisted history
// of item's instance, so that its next turn can run on l.
func (l *live) continues(item *store.WorkItem) bool {
	return l.moduleHash == item.Instance.ModuleHash && l.execution == item.Instance.ExecutionID && int64(len(l.history)) == item.HistoryLen
}

// turn runs a turn of l on in: the engine asks for activations, one by
// one, and l's guest answers each.
func (l *live) turn(in engine.TurnInput) (*engine.TurnResult, error) {
	t, err := l.exec.Begin(in)
	if err != nil {
		return nil, err
	}
	for a := t.Next(); a != nil; a = t.Next() {
		t.Answer(l.activate(a))
	}
	return t.Result(), nil
}

// activate hands an activation to l's guest; a guest that could not start
// answers each with why, and the engine fails the instance with it.
func (l *live) activate(a *abi.Activation) ([]abi.Command, error) {
	if l.guest == nil {
		return nil, l.broken
	}
	return l.guest.Activate(a)
}

func (l *live) close(ctx context.Context) {
	if l.guest != nil {
		l.guest.close(ctx)
	}
}

// orchestrationGuest drives an orchestration in a deterministic sandbox: it
// sets the logical clock and the replay flag before each activation.
type orchestrationGuest struct {
	*wasmGuest
	ctx context.Context
	env *wasi.Env
	// log, when set, is where the guest's output goes, silent while it
	// replays.
	log *guestLog
	// maxPayload bounds what one of its commands may carry; zero means no
	// bound.
	maxPayload int
}

// startOrchestration starts a fresh instance of mod for an orchestration
// whose randomness comes from seed. What the guest prints goes to out (nil:
// nowhere), and log, when set, is told when the guest replays.
func startOrchestration(ctx context.Context, mod sandbox.Module, opts *Options, seed [32]byte, out io.Writer, log *guestLog) (*orchestrationGuest, error) {
	if out == nil {
		out = io.Discard
	}
	stderr := newCrashLog()
	env := wasi.NewDeterministic(seed, out, io.MultiWriter(out, stderr))
	env.SetStepBudget(opts.StepBudget)
	g, err := newGuest(ctx, mod, guestConfig{env: env, timeout: opts.ActivationTimeout, stderr: stderr, memoryLimit: opts.MemoryLimit, fromSnapshot: true})
	if err != nil {
		return nil, err
	}
	return &orchestrationGuest{wasmGuest: g, ctx: ctx, env: env, log: log, maxPayload: opts.MaxPayload}, nil
}

func (o *orchestrationGuest) Activate(a *abi.Activation) ([]abi.Command, error) {
	o.env.SetActivation(a)
	if o.log != nil {
		o.log.setReplaying(a.Replaying)
	}
	raw, err := o.exchange(o.ctx, abi.ExportActivate, abi.EncodeActivation(a))
	if o.log != nil {
		o.log.endStep()
	}
	if err != nil {
		return nil, err
	}
	res, err := abi.DecodeActivationResult(raw)
	if err != nil {
		return nil, fmt.Errorf("its commands do not decode: %w", err)
	}
	if o.maxPayload > 0 {
		if err := checkCommands(res.Commands, o.maxPayload); err != nil {
			return nil, err
		}
	}
	if err := checkCommandJSON(res.Commands); err != nil {
		return nil, err
	}
	return res.Commands, nil
}

// seed derives an execution's random seed from its identity, so that what
// it draws from its Env (crypto/rand) is the same on every replay. (The Go
// runtime's own randomness, such as map order and math/rand's global
// source, comes from the module's snapshot: the same in every instance.)
func seed(instanceID string, execution int64) [32]byte {
	return sha256.Sum256([]byte(fmt.Sprintf("durabox/%s/%d", instanceID, execution)))
}

// Seed returns the random seed of an execution of an instance whose
// history, and first messages if its first turn has not committed, are
// events: the seed of its own number, or, for a reset execution, of the
// execution its ExecutionReset marker names, which recorded the kept
// events. A host gives each execution's orchestration this seed.
func Seed(instanceID string, execution int64, events ...[]engine.Event) [32]byte {
	return seed(instanceID, seedExecution(execution, events...))
}

// seedExecution returns the number of the execution whose seed an
// execution draws from, as Seed says.
func seedExecution(execution int64, events ...[]engine.Event) int64 {
	for _, evs := range events {
		for _, ev := range evs {
			if ev.Kind == engine.ExecutionReset {
				return ev.SeedExecution
			}
		}
	}
	return execution
}

// newLive starts a fresh wasm instance for an orchestration instance on its
// module, drawing from seed.
func (h *Host) newLive(ctx context.Context, inst store.Instance, seed [32]byte) *live {
	l := &live{moduleHash: inst.ModuleHash, execution: inst.ExecutionID, exec: engine.NewExecution()}
	mod, err := h.reg.module(ctx, inst.ModuleHash)
	if err != nil {
		l.broken = err
		return l
	}
	log := newGuestLog(h.opts.Logger, h.opts.Clock, "instance", inst.ID)
	if l.guest, err = startOrchestration(ctx, mod, &h.opts, seed, log, log); err != nil {
		l.broken = err
		return l
	}
	h.metrics.SandboxStarted("orchestration")
	return l
}

// memory is what l holds: the pages of its guest's linear memory that are
// its own (sandbox.Instance.Resident: on wazero a page of the snapshot it
// only read is shared; on wasmtime every page is its own), what the
// runtime keeps for it (instanceOverhead), and its history. The pages are counted
// afresh when the linear memory has grown and every remeasureEvery turns,
// not after every turn: counting reads the kernel's page table for the
// whole memory, which cost a sequence of activities 7% of its CPU.
func (l *live) memory() uint64 {
	var n uint64
	if l.guest != nil {
		if size := l.guest.inst.MemorySize(); size != l.residentOf || l.turns%remeasureEvery == 0 {
			l.resident, l.residentOf = l.guest.inst.Resident(), size
		}
		l.turns++
		n = l.resident + instanceOverhead
	}
	return n + l.historyBytes
}

// remeasureEvery is how many turns the cache counts an instance's pages
// once in while its memory does not grow. A Go guest's turns reuse its
// heap, so what the count misses in between is a few pages.
const remeasureEvery = 16

// instanceOverhead is what a wasm instance of a Go guest costs beside its
// linear memory: on wazero, its function references and tables on Go's
// heap, about 185 KiB (the memory step of make bench, BENCHMARKS.md); on
// wasmtime, what it allocates outside Go's heap, no more.
// TestLiveMemoryCountsWhatInstancesHold holds the count within 25% of what
// instances cost the process, on both.
const instanceOverhead = 192 << 10

// extend appends events to l's history.
func (l *live) extend(events []engine.Event) {
	l.history = append(l.history, events...)
	for i := range events {
		l.historyBytes += eventSize(&events[i])
	}
}

// eventSize is roughly the memory an event holds.
func eventSize(e *engine.Event) uint64 {
	n := unsafe.Sizeof(*e) + uintptr(len(e.Name)+len(e.InstanceID)+len(e.Input)+len(e.Result)+len(e.Reason)+len(e.CustomStatus))
	if e.Failure != nil {
		n += unsafe.Sizeof(*e.Failure) + uintptr(len(e.Failure.Message)+len(e.Failure.Details))
	}
	return uint64(n)
}

// liveCache keeps at most max live instances holding at most maxMemory
// bytes between them, dropping the least recently used: an instance
// dropped is replayed from its history when it next runs. A dispatcher
// takes an instance out for the length of a turn, so an instance is never
// used by two turns or closed while in use.
type liveCache struct {
	mu        sync.Mutex
	max       int
	maxMemory uint64
	memory    uint64
	order     *list.List // of *cacheEntry, most recent at the front
	items     map[string]*list.Element
}

type cacheEntry struct {
	id     string
	l      *live
	memory uint64
}

func newLiveCache(max int, maxMemory uint64) *liveCache {
	return &liveCache{max: max, maxMemory: maxMemory, order: list.New(), items: map[string]*list.Element{}}
}

// take removes and returns the live instance for id, or nil.
func (c *liveCache) take(id string) *live {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[id]
	if !ok {
		return nil
	}
	return c.remove(e)
}

// drop closes the live instances kept for ids, if any: their instances
// finished, were purged, reset or moved, or are ahead of what the store
// holds.
func (c *liveCache) drop(ctx context.Context, ids ...string) {
	for _, id := range ids {
		if l := c.take(id); l != nil {
			l.close(ctx)
		}
	}
}

// remove drops an entry and returns its live instance. c.mu is held.
func (c *liveCache) remove(e *list.Element) *live {
	ce := e.Value.(*cacheEntry)
	c.order.Remove(e)
	delete(c.items, ce.id)
	c.memory -= ce.memory
	return ce.l
}

// put keeps l for id, closing the least recently used beyond the bounds
// (l itself, if it alone is over the memory bound). It replaces, and
// closes, one kept for id already: a turn that ran on a fresh instance
// while the one before it was still on its way back to the cache.
func (c *liveCache) put(ctx context.Context, id string, l *live) {
	ce := &cacheEntry{id: id, l: l, memory: l.memory()}
	c.mu.Lock()
	var evicted []*live
	if e, ok := c.items[id]; ok {
		evicted = append(evicted, c.remove(e))
	}
	c.items[id] = c.order.PushFront(ce)
	c.memory += ce.memory
	for c.order.Len() > c.max || c.memory > c.maxMemory {
		evicted = append(evicted, c.remove(c.order.Back()))
	}
	c.mu.Unlock()
	for _, l := range evicted {
		l.close(ctx)
	}
}

// size returns how many live instances c keeps, and the memory they hold.
func (c *liveCache) size() (int, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.memory
}

func (c *liveCache) closeAll(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.items {
		e.Value.(*cacheEntry).l.close(ctx)
	}
	c.items, c.order, c.memory = map[string]*list.Element{}, list.New(), 0
}
