package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/internal/sandbox"
	"github.com/durabox/durabox/host/internal/wasi"
)

// guestConfig configures one wasm instance.
type guestConfig struct {
	env *wasi.Env
	// timeout bounds each call into the guest; zero means none.
	timeout time.Duration
	// stderr, if set, watches what the guest writes to stderr.
	stderr *crashLog
	// log, if set, is where the guest's output goes.
	log *guestLog
	// memoryLimit is the instance's memory limit, for messages.
	memoryLimit uint64
	// activity says the instance runs activities, for messages.
	activity bool
	// callTimeout says timeout is the one the activity call set
	// (durabox.WithTimeout), not the host's, for messages.
	callTimeout bool
	// fromSnapshot starts the instance from its module's snapshot (see
	// package sandbox): for orchestrations, whose Env is deterministic.
	fromSnapshot bool
}

// wasmGuest is one live instance of a module, with the plumbing to move
// bytes in and out of it.
type wasmGuest struct {
	inst sandbox.Instance
	cfg  guestConfig
}

// newGuest starts an instance of mod: its initialization (a start
// function, then _initialize: the package variables and init functions
// of a Go guest) runs under the guest's deadline, like every call.
func newGuest(ctx context.Context, mod sandbox.Module, cfg guestConfig) (*wasmGuest, error) {
	if cfg.stderr == nil {
		cfg.stderr = newCrashLog()
	}
	callCtx, cancel := cfg.deadline(ctx)
	defer cancel()
	inst, err := mod.Instantiate(callCtx, sandbox.Config{Env: cfg.env, FromSnapshot: cfg.fromSnapshot})
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("its initialization (_initialize: package variables and init functions) ran past its %s deadline (an endless loop?)", cfg.timeout)
		}
		return nil, explain(err, &cfg)
	}
	return &wasmGuest{inst: inst, cfg: cfg}, nil
}

// deadline returns ctx with the guest's deadline for one call, if it has
// one.
func (cfg *guestConfig) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if cfg.timeout > 0 {
		c := &callContext{Context: ctx, deadline: time.Now().Add(cfg.timeout)}
		return c, c.stop
	}
	return ctx, func() {}
}

// callContext is the context of one call into a guest: its parent, with
// the guest's deadline. A call that goes well is only ever asked Err (by
// the sandbox's yields, every wasmrewrite.YieldEvery loop iterations, and
// when it returns), which compares the clock with the deadline; the timer
// that closes Done is made only if something asks for Done. (The timer of
// context.WithTimeout, made and stopped for every activation, was a
// quarter of the host's own work in a cold replay.)
type callContext struct {
	context.Context
	deadline time.Time
	once     sync.Once
	// timed, once Done has been asked for, is the parent with the deadline,
	// and cancel stops its timer.
	timed  atomic.Pointer[context.Context]
	cancel context.CancelFunc
}

func (c *callContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *callContext) Done() <-chan struct{} {
	c.once.Do(func() {
		timed, cancel := context.WithDeadline(c.Context, c.deadline)
		c.cancel = cancel
		c.timed.Store(&timed)
	})
	return (*c.timed.Load()).Done()
}

// Err is the parent's error, else context.DeadlineExceeded once the
// deadline has passed; once Done has been asked for, it is the error of
// the context whose Done it returned, so that Err is nil until Done is
// closed.
func (c *callContext) Err() error {
	if timed := c.timed.Load(); timed != nil {
		return (*timed).Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// stop releases the timer, if Done made one.
func (c *callContext) stop() {
	if c.timed.Load() != nil {
		c.cancel()
	}
}

// call calls an export under the guest's deadline.
func (g *wasmGuest) call(ctx context.Context, export string, args ...uint64) (uint64, error) {
	ctx, cancel := g.cfg.deadline(ctx)
	defer cancel()
	return g.callWithin(ctx, export, args...)
}

// callWithin calls an export under ctx's deadline.
func (g *wasmGuest) callWithin(ctx context.Context, export string, args ...uint64) (uint64, error) {
	res, err := g.inst.Call(ctx, export, args...)
	if err != nil {
		return 0, explain(err, &g.cfg)
	}
	if len(res) == 0 {
		return 0, nil
	}
	return res[0], nil
}

// exchange writes req into guest memory (when it is not nil), calls export
// with its region and returns the bytes of the region the export returns.
// The guest's deadline bounds the two calls together: they are one step.
func (g *wasmGuest) exchange(ctx context.Context, export string, req []byte) ([]byte, error) {
	ctx, cancel := g.cfg.deadline(ctx)
	defer cancel()
	var args []uint64
	if req != nil {
		addr, err := g.callWithin(ctx, abi.ExportAlloc, uint64(len(req)))
		if err != nil {
			return nil, err
		}
		if !g.inst.Write(uint32(addr), req) {
			return nil, fmt.Errorf("%s: %w", abi.ExportAlloc, errNoRegion)
		}
		args = []uint64{addr, uint64(len(req))}
	}
	packed, err := g.callWithin(ctx, export, args...)
	if err != nil {
		return nil, err
	}
	addr, n := abi.UnpackRegion(packed)
	if n == 0 {
		return nil, nil
	}
	out, ok := g.inst.Read(addr, n)
	if !ok {
		return nil, fmt.Errorf("%s: %w", export, errNoRegion)
	}
	return out, nil
}

func (g *wasmGuest) close(ctx context.Context) { g.inst.Close(ctx) }

// timedOut is an activity attempt that ran past its deadline: the one its
// call set (byCall), else the host's.
type timedOut struct {
	timeout time.Duration
	byCall  bool
}

// Error names the deadline and what sets it, in the words of the command
// line and the SDK.
func (e *timedOut) Error() string {
	if e.byCall {
		return fmt.Sprintf("it ran past its %s deadline for one attempt, which its call set with durabox.WithTimeout", e.timeout)
	}
	return fmt.Sprintf("it ran past its %s deadline for one attempt, which durabox serve --activity-timeout sets (a call sets its own with durabox.WithTimeout)", e.timeout)
}

// explain turns an error from the sandbox into one that names the cause in
// words a user understands.
func explain(err error, cfg *guestConfig) error {
	var (
		exit   *wasi.ExitError
		budget *wasi.BudgetError
		timer  *sandbox.TimerError
	)
	switch {
	case errors.As(err, &timer):
		return timerRefused(timer.Call)
	case errors.As(err, &budget):
		return fmt.Errorf("it ran past its budget of %d loop iterations for one step, having run %d (an endless loop?)", budget.Budget, budget.Used)
	case errors.Is(err, context.DeadlineExceeded) && cfg.activity:
		return &timedOut{timeout: cfg.timeout, byCall: cfg.callTimeout}
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("it ran past its %s deadline for one step (an endless loop?)", cfg.timeout)
	case errors.As(err, &exit):
		return fmt.Errorf("it called os.Exit(%d)", exit.Code)
	case errors.Is(err, wasi.ErrBlockingSleep):
		return err
	}
	switch cause := cfg.stderr.cause(); {
	case cause == "fatal error: out of memory":
		return fmt.Errorf("it ran out of memory: the limit is %d MiB per instance", cfg.memoryLimit>>20)
	case cause == "fatal error: stack overflow":
		return errors.New("it overflowed its stack (endless recursion?)")
	case cause == "fatal error: all goroutines are asleep - deadlock!":
		return errors.New("it deadlocked: every goroutine is blocked; an orchestration may wait only on the SDK's futures (activities, timers, events, children, branches started with ctx.Go), never on a channel, a mutex or a WaitGroup: a branch runs only while the others wait on futures")
	case cause != "":
		return fmt.Errorf("it crashed: %s", cause)
	}
	return fmt.Errorf("it crashed: %w", err)
}

// crashLog watches what a guest writes to stderr for the line where the Go
// runtime says why it stopped: the first "panic:" or "fatal error:" line,
// of which it keeps maxLine bytes.
type crashLog struct {
	lines lineSplitter
	first string
}

// maxLine bounds the line crashLog holds while it waits for its end.
const maxLine = 4 << 10

func newCrashLog() *crashLog { return &crashLog{lines: lineSplitter{max: maxLine}} }

func (c *crashLog) Write(p []byte) (int, error) {
	if c.first == "" {
		c.lines.write(p, func(b []byte, _ bool) {
			if c.first == "" && (bytes.HasPrefix(b, []byte("panic: ")) || bytes.HasPrefix(b, []byte("fatal error: "))) {
				c.first = string(b)
			}
		})
	}
	return len(p), nil
}

// cause returns the runtime's reason for stopping, or "".
func (c *crashLog) cause() string { return c.first }
