package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/host/internal/wasi"
	"github.com/durabox/durabox/internal/guestbuild"
)

var (
	ctx = context.Background()
	// probeModule is the probe guest, compiled once for every test.
	probeModule Module
	probeErr    error
	probeOnce   sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	guestbuild.Cleanup()
	os.Exit(code)
}

func probe(t *testing.T) Module {
	t.Helper()
	probeOnce.Do(func() {
		wasm, err := guestbuild.Wasm("host/internal/sandbox/testdata/probe")
		if err != nil {
			probeErr = err
			return
		}
		rt, err := NewWazero(ctx, WazeroOptions{MemoryLimitBytes: 64 << 20})
		if err != nil {
			probeErr = err
			return
		}
		probeModule, probeErr = rt.Compile(ctx, wasm)
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return probeModule
}

func instance(t *testing.T, mod Module, env *wasi.Env) Instance {
	t.Helper()
	inst, err := mod.Instantiate(ctx, Config{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(ctx) })
	return inst
}

func call(t *testing.T, inst Instance, export string) uint64 {
	t.Helper()
	res, err := inst.Call(ctx, export)
	if err != nil {
		t.Fatalf("%s: %v", export, err)
	}
	if len(res) == 0 {
		return 0
	}
	return res[0]
}

func seed(b byte) [32]byte { return [32]byte{b} }

func TestDeterministicAnswersDependOnlyOnSeedAndLogicalTime(t *testing.T) {
	mod := probe(t)
	const logical = int64(1_800_000_000_123_456_789)
	answers := func(s [32]byte) [3]uint64 {
		env := wasi.NewDeterministic(s, nil, nil)
		inst := instance(t, mod, env)
		env.SetTime(logical)
		return [3]uint64{call(t, inst, "now"), call(t, inst, "random"), call(t, inst, "maporder")}
	}
	a, b, c := answers(seed(1)), answers(seed(1)), answers(seed(2))
	if a != b {
		t.Fatalf("same seed, different answers: %v and %v", a, b)
	}
	if int64(a[0]) != logical {
		t.Errorf("time.Now = %d, want the logical time %d", a[0], logical)
	}
	if c[1] == a[1] || c[2] == a[2] {
		t.Errorf("another seed gave the same random stream or map order: %v and %v", a, c)
	}
}

func TestNoFilesSocketsOrEnvironment(t *testing.T) {
	mod := probe(t)
	inst := instance(t, mod, wasi.NewDeterministic(seed(1), nil, nil))
	for _, export := range []string{"readfile", "dial"} {
		if call(t, inst, export) != 1 {
			t.Errorf("%s succeeded inside the sandbox", export)
		}
	}
	if n := call(t, inst, "getenv"); n != 0 {
		t.Errorf("getenv found a value of %d bytes", n)
	}
}

func TestRealEnvironmentForActivities(t *testing.T) {
	mod := probe(t)
	inst := instance(t, mod, wasi.NewReal([]string{"PROBE=hello"}, nil, nil))
	if d := time.Since(time.Unix(0, int64(call(t, inst, "now")))).Abs(); d > time.Minute {
		t.Errorf("real clock is %s off", d)
	}
	if n := call(t, inst, "getenv"); n != 5 {
		t.Errorf("getenv(PROBE) has %d bytes, want 5", n)
	}
	call(t, inst, "sleep")
	if first, second := call(t, inst, "random"), call(t, inst, "random"); first == second {
		t.Errorf("real randomness repeated itself: %d twice", first)
	}
}

func TestSleepIsRecordedNotWaited(t *testing.T) {
	mod := probe(t)
	env := wasi.NewDeterministic(seed(1), nil, nil)
	inst := instance(t, mod, env)
	env.TakeSleep()
	call(t, inst, "sleep")
	if d := env.TakeSleep(); d < time.Millisecond {
		t.Fatalf("TakeSleep = %s after time.Sleep(1ms)", d)
	}
}

func TestExitAndDeadline(t *testing.T) {
	mod := probe(t)
	inst := instance(t, mod, wasi.NewDeterministic(seed(1), nil, nil))
	_, err := inst.Call(ctx, "exit")
	var exit *wasi.ExitError
	if !errors.As(err, &exit) || exit.Code != 3 {
		t.Fatalf("exit: err = %v, want exit code 3", err)
	}

	inst = instance(t, mod, wasi.NewDeterministic(seed(1), nil, nil))
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := inst.Call(short, "spin"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("spin: err = %v, want the deadline", err)
	}
}

func TestStdoutReachesTheWriter(t *testing.T) {
	mod := probe(t)
	var out bytes.Buffer
	inst := instance(t, mod, wasi.NewDeterministic(seed(1), &out, nil))
	call(t, inst, "say")
	if out.String() != "hello from the guest\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestEveryImportIsProvided(t *testing.T) {
	mod := probe(t)
	if len(mod.Imports()) == 0 {
		t.Fatal("the probe imports nothing")
	}
	for _, imp := range mod.Imports() {
		if !wasi.Provides(imp.Module, imp.Name) {
			t.Errorf("the host does not provide %s.%s", imp.Module, imp.Name)
		}
	}
}

func TestCompileRefusesGarbage(t *testing.T) {
	rt, err := NewWazero(ctx, WazeroOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	if _, err := rt.Compile(ctx, []byte("\x00asm\x01\x00\x00\x00\x01\x05")); err == nil || !strings.HasPrefix(err.Error(), "sandbox: not a valid wasm module: ") {
		t.Fatalf("err = %v", err)
	}
}
