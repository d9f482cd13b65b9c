package host

import (
	"context"
	"time"
	"unsafe"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
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
	// back since (memory); first is its module's count after a first turn.
	resident, residentOf uint64
	turns                int
	first                *firstPages
	// queried is set once its guest has answered a query: its heap is no
	// longer the one a replay of its history makes, so no turn runs on
	// it, though queries still may (RATIONALE.md, "Why does a query run
	// on the live instance, and no turn after it?").
	queried bool
	// committedAt is the time of the commit that recorded the history it
	// has applied, which the store keeps as the instance's UpdatedAt once
	// that commit is in: a query compares the two (Host.current).
	committedAt time.Time
}

// continues reports whether l has applied exactly the persisted history
// of item's instance, and answered no query, so that its next turn can run
// on l.
func (l *live) continues(item *store.WorkItem) bool {
	return !l.queried && l.moduleHash == item.Instance.ModuleHash && l.execution == item.Instance.ExecutionID && int64(len(l.history)) == item.HistoryLen
}

// turn runs a turn of l on in: the engine asks for activations, one by
// one, and l's guest answers each.
func (l *live) turn(in engine.TurnInput) (*engine.TurnResult, error) {
	t, err := l.exec.Begin(in)
	if err != nil {
		return nil, err
	}
	for a := t.Next(); a != nil; a = t.Next() {
		t.AnswerResult(l.activate(a))
	}
	return t.Result(), nil
}

// activate hands an activation to l's guest; a guest that could not start
// answers each with why, and the engine fails the instance with it.
func (l *live) activate(a *abi.Activation) (*abi.ActivationResult, error) {
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

// newLive starts a fresh wasm instance for an orchestration instance on its
// module, drawing from seed.
func (h *Host) newLive(ctx context.Context, inst store.Instance, seed [32]byte) *live {
	l := &live{moduleHash: inst.ModuleHash, execution: inst.ExecutionID, exec: engine.NewExecution()}
	mod, err := h.reg.module(ctx, inst.ModuleHash)
	if err != nil {
		l.broken = err
		return l
	}
	l.first = &mod.firstPages
	log := newGuestLog(h.opts.Logger, h.opts.Clock, "instance", inst.ID, "execution", inst.ExecutionID)
	if l.guest, err = startOrchestration(ctx, mod, &h.opts, seed, log, log); err != nil {
		l.broken = err
		return l
	}
	h.metrics.SandboxStarted("orchestration")
	return l
}

// memory is what l holds: what its guest's instance holds of its own
// (sandbox.Instance.Resident: the pages of its linear memory it wrote, a
// page of the snapshot it only read being shared, and what the runtime
// keeps for it), and its history. The instance is measured afresh when the
// linear memory has grown and every remeasureEvery turns, not after every
// turn: counting reads the kernel's page table for the whole memory, which
// cost a sequence of activities 7% of its CPU. At its first turn it takes
// the count of the last instance of its module measured there, at the
// same size of linear memory, if any: a new instance's first turn writes
// much the same pages as the last one's, and the count cost 64 hellos in
// flight 2.7% of their CPU, where a hello's instance is kept once.
// TestLiveMemoryCountsWhatInstancesHold holds the count within 25% of what
// instances cost the process, on both runtimes.
func (l *live) memory() uint64 {
	var n uint64
	if l.guest != nil {
		size := l.guest.inst.MemorySize()
		first, known := uint64(0), false
		if l.turns == 0 && l.first != nil {
			first, known = l.first.at(size)
		}
		switch {
		case known:
			l.resident, l.residentOf = first, size
		case size != l.residentOf || l.turns%remeasureEvery == 0:
			l.resident, l.residentOf = l.guest.inst.Resident(), size
			if l.turns == 0 && l.first != nil {
				l.first.keep(size, l.resident)
			}
		}
		l.turns++
		n = l.resident
	}
	return n + l.historyBytes
}

// remeasureEvery is how many turns the cache counts an instance's pages
// once in while its memory does not grow. A Go guest's turns reuse its
// heap, so what the count misses in between is a few pages.
const remeasureEvery = 16

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
