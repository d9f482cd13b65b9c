package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
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
	// memoryLimit is the instance's memory limit, for messages.
	memoryLimit uint64
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

func newGuest(ctx context.Context, mod sandbox.Module, cfg guestConfig) (*wasmGuest, error) {
	if cfg.stderr == nil {
		cfg.stderr = &crashLog{}
	}
	inst, err := mod.Instantiate(ctx, sandbox.Config{Env: cfg.env, FromSnapshot: cfg.fromSnapshot})
	if err != nil {
		return nil, explain(err, cfg.stderr, cfg.timeout, cfg.memoryLimit)
	}
	return &wasmGuest{inst: inst, cfg: cfg}, nil
}

// call calls an export under the guest's deadline.
func (g *wasmGuest) call(ctx context.Context, export string, args ...uint64) (uint64, error) {
	if g.cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.cfg.timeout)
		defer cancel()
	}
	res, err := g.inst.Call(ctx, export, args...)
	if err != nil {
		return 0, explain(err, g.cfg.stderr, g.cfg.timeout, g.cfg.memoryLimit)
	}
	if len(res) == 0 {
		return 0, nil
	}
	return res[0], nil
}

// exchange writes req into guest memory (when it is not nil), calls export
// with its region and returns the bytes of the region the export returns.
func (g *wasmGuest) exchange(ctx context.Context, export string, req []byte) ([]byte, error) {
	var args []uint64
	if req != nil {
		addr, err := g.call(ctx, abi.ExportAlloc, uint64(len(req)))
		if err != nil {
			return nil, err
		}
		if !g.inst.Write(uint32(addr), req) {
			return nil, fmt.Errorf("%s: %w", abi.ExportAlloc, errNoRegion)
		}
		args = []uint64{addr, uint64(len(req))}
	}
	packed, err := g.call(ctx, export, args...)
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

// explain turns an error from the sandbox into one that names the cause in
// words a user understands.
func explain(err error, stderr *crashLog, timeout time.Duration, memoryLimit uint64) error {
	var (
		exit   *wasi.ExitError
		budget *wasi.BudgetError
	)
	switch {
	case errors.As(err, &budget):
		return fmt.Errorf("it ran past its budget of %d loop iterations for one step, having run %d (an endless loop?)", budget.Budget, budget.Used)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("it ran past its %s deadline for one step (an endless loop?)", timeout)
	case errors.As(err, &exit):
		return fmt.Errorf("it called os.Exit(%d)", exit.Code)
	case errors.Is(err, wasi.ErrBlockingSleep):
		return err
	}
	switch cause := stderr.cause(); {
	case cause == "fatal error: out of memory":
		return fmt.Errorf("it ran out of memory: the limit is %d MiB per instance", memoryLimit>>20)
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
// runtime says why it stopped: the first "panic:" or "fatal error:" line.
type crashLog struct {
	partial []byte
	first   string
}

// maxLine bounds the line crashLog holds while it waits for its end.
const maxLine = 4 << 10

func (c *crashLog) Write(p []byte) (int, error) {
	if c.first != "" {
		return len(p), nil
	}
	c.partial = append(c.partial, p...)
	for c.first == "" {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := string(c.partial[:i])
		c.partial = c.partial[i+1:]
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			c.first = line
		}
	}
	if len(c.partial) > maxLine {
		c.partial = c.partial[len(c.partial)-maxLine:]
	}
	return len(p), nil
}

// cause returns the runtime's reason for stopping, or "".
func (c *crashLog) cause() string { return c.first }
