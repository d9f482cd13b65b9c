package sandbox

import (
	"testing"

	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/internal/guestbuild"
)

// BenchmarkInstantiateHello measures a fresh instance of the hello example:
// wazero's instantiation plus the Go runtime's start-up (_initialize).
func BenchmarkInstantiateHello(b *testing.B) {
	wasm, err := guestbuild.Wasm("examples/wasm/hello")
	if err != nil {
		b.Fatal(err)
	}
	rt, err := NewWazero(ctx, WazeroOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Compile(ctx, wasm)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		inst, err := mod.Instantiate(ctx, Config{Env: wasi.NewDeterministic(seed(1), nil, nil)})
		if err != nil {
			b.Fatal(err)
		}
		inst.Close(ctx)
	}
}
