//go:build !nowasmtime

package sandbox

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/internal/guestbuild"
)

// chaosPkg is the host's guest that observes every source of
// nondeterminism and sends what it saw to activities.
const chaosPkg = "host/testdata/guests/chaos"

// transcript runs the chaos orchestration on inst, which answers from env,
// to its end, resolving every activity it schedules with its input a
// second later, and returns every activation result, in order. With
// replay, every activation but the first is marked replaying.
func transcript(t *testing.T, inst Instance, env *wasi.Env, replay bool) []byte {
	t.Helper()
	const start = int64(1_800_000_000_000_000_000)
	a := &abi.Activation{Time: start, Jobs: []abi.Job{{Kind: abi.JobStart, Name: "Chaos", InstanceID: "chaos-1", Input: []byte("2")}}}
	var out bytes.Buffer
	for len(a.Jobs) > 0 {
		env.SetTime(a.Time)
		env.SetActivation(a)
		req := abi.EncodeActivation(a)
		addr := call(t, inst, abi.ExportAlloc, uint64(len(req)))
		if !inst.Write(uint32(addr), req) {
			t.Fatal("cannot write the activation")
		}
		region, n := abi.UnpackRegion(call(t, inst, abi.ExportActivate, addr, uint64(len(req))))
		raw, ok := inst.Read(region, n)
		if !ok {
			t.Fatal("cannot read the activation's result")
		}
		out.Write(raw)
		res, err := abi.DecodeActivationResult(raw)
		if err != nil {
			t.Fatal(err)
		}
		a = &abi.Activation{Time: a.Time + 1e9, Replaying: replay}
		for _, c := range res.Commands {
			if c.Kind == abi.CommandScheduleActivity {
				a.Jobs = append(a.Jobs, abi.Job{Kind: abi.JobResolveActivity, Seq: c.Seq, Result: c.Input})
			}
		}
	}
	return out.Bytes()
}

// One history runs the same, byte for byte, through every way an
// orchestration's instance can start: from the snapshot (mapped), reset
// for reuse, the normal way on the rewritten module, and on the module as
// given (which has no snapshot), and on wasmtime from its snapshot, reset
// for reuse and the normal way, live and replaying. Another seed gives
// another transcript, so the comparison is not vacuous.
func TestEveryStartPathReplaysAlike(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm(chaosPkg)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := NewWazero(ctx, Options{CacheDir: cacheDir, MemoryLimitBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	rewritten, err := rt.Compile(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer rewritten.Close(ctx)
	if rewritten.(*wazeroModule).layout == nil {
		t.Fatal("the chaos guest was compiled as is")
	}
	asIs, err := rt.(*wazeroRuntime).compile(ctx, wasm, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer asIs.Close(ctx)
	wrt, err := NewWasmtime(ctx, Options{CacheDir: cacheDir, MemoryLimitBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer wrt.Close(ctx)
	onWasmtime, err := wrt.Compile(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer onWasmtime.Close(ctx)

	run := func(mod Module, fromSnapshot, replay bool, s [32]byte) []byte {
		env := wasi.NewDeterministic(s, nil, nil)
		inst, err := mod.Instantiate(ctx, Config{Env: env, FromSnapshot: fromSnapshot})
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close(ctx)
		return transcript(t, inst, env, replay)
	}
	reference := run(rewritten, true, false, seed(1))
	// reuse leaves an instance of mod, which idle holds, reset for the
	// next start from the snapshot, after it ran some code but did not grow
	// its memory (as the chaos orchestration does, which keeps its
	// instances from being reused).
	reuse := func(mod Module, idle func() int) func(*testing.T) {
		return func(t *testing.T) {
			inst := fromSnapshot(t, mod, deterministic())
			call(t, inst, abi.ExportAlloc, 64)
			inst.Close(ctx)
			if n := idle(); n != 1 {
				t.Fatalf("%d instances reset for reuse, want 1", n)
			}
		}
	}
	wazeroIdle := func() int { return len(rewritten.(*wazeroModule).idle.idle) }
	wasmtimeIdle := func() int { return len(onWasmtime.(*wasmtimeModule).idle.idle) }
	for _, replay := range []bool{false, true} {
		for _, path := range []struct {
			name         string
			mod          Module
			fromSnapshot bool
			before       func(*testing.T)
		}{
			{"from the snapshot", rewritten, true, nil},
			{"reset for reuse", rewritten, true, reuse(rewritten, wazeroIdle)},
			{"the normal way", rewritten, false, nil},
			{"as given", asIs, true, nil},
			{"on wasmtime from the snapshot", onWasmtime, true, nil},
			{"on wasmtime reset for reuse", onWasmtime, true, reuse(onWasmtime, wasmtimeIdle)},
			{"on wasmtime the normal way", onWasmtime, false, nil},
		} {
			t.Run(fmt.Sprintf("%s, replaying %v", path.name, replay), func(t *testing.T) {
				if path.before != nil {
					path.before(t)
				}
				if got := run(path.mod, path.fromSnapshot, replay, seed(1)); !bytes.Equal(got, reference) {
					t.Errorf("transcript:\n%q\nwant:\n%q", got, reference)
				}
			})
		}
	}
	if other := run(rewritten, true, false, seed(2)); bytes.Equal(other, reference) {
		t.Error("another seed gave the same transcript")
	}
}
