package sandbox

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/durabox/durabox/host/internal/wasmrewrite/wasmtest"
)

// spinning is a module the rewrite does not handle (it has a start
// function), whose export spin loops forever.
var spinning = wasmtest.Module(1, "\x01\x60\x00\x00", 3, "\x02\x00\x00", 5, wasmtest.MemorySec, 7, "\x02\x0b_initialize\x00\x00\x04spin\x00\x01", 8, "\x00",
	10, "\x02\x02\x00\x0b\x07\x00\x03\x40\x0c\x00\x0b\x0b")

// TestEndlessLoopsStop: a call in an endless loop stops when its context
// ends, in a module the rewrite instruments and in one it does not, and
// does not hold up the host's garbage collector meanwhile (which waits for
// every goroutine, and cannot stop compiled guest code).
//
// Not parallel: it checks that a guest looping forever does not hold up the
// process's garbage collector, which tests running beside it would slow.
func TestEndlessLoopsStop(t *testing.T) {
	rt, err := NewWazero(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	plain, err := rt.Compile(ctx, spinning)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	if plain.(*wazeroModule).layout != nil {
		t.Fatal("the module with a start function was rewritten")
	}
	for _, tt := range []struct {
		name string
		mod  Module
	}{{"instrumented", guest(t)}, {"not instrumented", plain}} {
		t.Run(tt.name, func(t *testing.T) {
			inst := instanceWith(t, tt.mod, Config{Env: deterministic()})
			callCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			spun := make(chan error, 1)
			go func() {
				_, err := inst.Call(callCtx, "spin")
				spun <- err
			}()
			for range 20 {
				runtime.GC()
			}
			select {
			case err := <-spun:
				t.Fatalf("the spin ended (%v) before 20 garbage collections could run beside it", err)
			default:
			}
			if err := <-spun; !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
		})
	}
}
