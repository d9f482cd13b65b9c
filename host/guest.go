package host

import (
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
	// stderr, if set, also receives what the guest writes to stderr.
	stderr *tail
}

// wasmGuest is one live instance of a module, with the plumbing to move
// bytes in and out of it.
type wasmGuest struct {
	inst    sandbox.Instance
	timeout time.Duration
	stderr  *tail
}

func newGuest(ctx context.Context, mod sandbox.Module, cfg guestConfig) (*wasmGuest, error) {
	if cfg.stderr == nil {
		cfg.stderr = &tail{}
	}
	inst, err := mod.Instantiate(ctx, sandbox.Config{Env: cfg.env})
	if err != nil {
		return nil, explain(err, cfg.stderr, cfg.timeout)
	}
	return &wasmGuest{inst: inst, timeout: cfg.timeout, stderr: cfg.stderr}, nil
}

// call calls an export under the guest's deadline.
func (g *wasmGuest) call(ctx context.Context, export string, args ...uint64) (uint64, error) {
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	res, err := g.inst.Call(ctx, export, args...)
	if err != nil {
		return 0, explain(err, g.stderr, g.timeout)
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
func explain(err error, stderr *tail, timeout time.Duration) error {
	var exit *wasi.ExitError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("it ran past its %s deadline for one step (an endless loop?)", timeout)
	case errors.As(err, &exit):
		return fmt.Errorf("it called os.Exit(%d)", exit.Code)
	}
	if cause := stderr.cause(); cause != "" {
		return fmt.Errorf("it crashed: %s", cause)
	}
	return fmt.Errorf("it crashed: %w", err)
}

// tail keeps the end of what a guest wrote to stderr, to explain a crash.
type tail struct{ buf []byte }

const tailSize = 8 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

// cause returns the line where the Go runtime says why it stopped (a
// "panic:" or "fatal error:" line), or "".
func (t *tail) cause() string {
	for _, line := range strings.Split(string(t.buf), "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			return line
		}
	}
	return ""
}
