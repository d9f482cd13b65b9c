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

const guestPkg = "host/internal/sandbox/testdata/guest"

var (
	ctx = context.Background()
	// guestModule is the test guest, compiled once for every test.
	guestModule Module
	guestErr    error
	guestOnce   sync.Once
	// cacheDir is a compilation cache the tests share, so that each module
	// is compiled once (which is slow under the race detector, whose
	// instrumented compiler does it).
	cacheDir string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "durabox-sandbox-cache-*")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	guestbuild.Cleanup()
	os.Exit(code)
}

func guest(t *testing.T) Module {
	t.Helper()
	guestOnce.Do(func() {
		wasm, err := guestbuild.Wasm(guestPkg)
		if err != nil {
			guestErr = err
			return
		}
		rt, err := NewWazero(ctx, Options{CacheDir: cacheDir, MemoryLimitBytes: 64 << 20})
		if err != nil {
			guestErr = err
			return
		}
		guestModule, guestErr = rt.Compile(ctx, wasm)
	})
	if guestErr != nil {
		t.Fatal(guestErr)
	}
	return guestModule
}

// compiledGuest compiles the test guest on a wazero runtime of its own,
// both closed when the test ends. With no opts.CacheDir, it shares the
// tests'.
func compiledGuest(t *testing.T, opts Options) Module {
	t.Helper()
	return compiledGuestOn(t, NewWazero, opts)
}

// compiledGuestOn is compiledGuest on the runtime newRuntime makes.
func compiledGuestOn(t *testing.T, newRuntime func(context.Context, Options) (Runtime, error), opts Options) Module {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = cacheDir
	}
	rt, err := newRuntime(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	wasm, err := guestbuild.Wasm(guestPkg)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := rt.Compile(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mod.Close(ctx) })
	return mod
}

func instance(t *testing.T, mod Module, env *wasi.Env) Instance {
	t.Helper()
	return instanceWith(t, mod, Config{Env: env})
}

func instanceWith(t *testing.T, mod Module, cfg Config) Instance {
	t.Helper()
	inst, err := mod.Instantiate(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(ctx) })
	return inst
}

func call(t *testing.T, inst Instance, export string, args ...uint64) uint64 {
	t.Helper()
	res, err := inst.Call(ctx, export, args...)
	if err != nil {
		t.Fatalf("%s: %v", export, err)
	}
	if len(res) == 0 {
		return 0
	}
	return res[0]
}

func seed(b byte) [32]byte { return [32]byte{b} }

func deterministic() *wasi.Env { return wasi.NewDeterministic(seed(1), nil, nil) }

func TestDeterministicAnswersDependOnlyOnSeedAndLogicalTime(t *testing.T) {
	t.Parallel()
	mod := guest(t)
	const logical = int64(1_800_000_000_123_456_789)
	answers := func(s [32]byte) [3]uint64 {
		env := wasi.NewDeterministic(s, nil, nil)
		inst := instance(t, mod, env)
		env.SetTime(logical)
		return [3]uint64{call(t, inst, "now"), call(t, inst, "random"), call(t, inst, "maporder")}
	}
	// The instances stay alive until the test ends: many instances of one
	// module live at once.
	a, b, c := answers(seed(1)), answers(seed(1)), answers(seed(2))
	if a != b {
		t.Fatalf("same seed, different answers: %v and %v", a, b)
	}
	if int64(a[0]) != logical {
		t.Errorf("time.Now = %d, want the logical time %d", a[0], logical)
	}
	// crypto/rand differs with the seed; map order, which the Go runtime
	// seeds while it starts, under the one fixed Env, does not.
	if c[1] == a[1] || c[2] != a[2] {
		t.Errorf("seeds 1 and 2 gave the random numbers and map order %v and %v; want other random numbers, the same map order", a[1:], c[1:])
	}
}

func TestSetTimeMovesTimeNow(t *testing.T) {
	t.Parallel()
	env := deterministic()
	inst := instance(t, guest(t), env)
	for _, logical := range []int64{1_700_000_000_000_000_000, 1_700_000_123_000_000_000, 1_600_000_000_000_000_000} {
		env.SetTime(logical)
		if got := int64(call(t, inst, "now")); got != logical {
			t.Errorf("after SetTime(%d), time.Now = %d", logical, got)
		}
	}
}

func TestNoFilesSocketsOrEnvironment(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]*wasi.Env{"deterministic": deterministic(), "real": wasi.NewReal([]string{"OTHER=x"}, nil, nil)} {
		t.Run(name, func(t *testing.T) {
			inst := instance(t, guest(t), env)
			for _, export := range []string{"readfile", "dial"} {
				if call(t, inst, export) != 1 {
					t.Errorf("%s succeeded inside the sandbox", export)
				}
			}
			if n := call(t, inst, "getenv"); n != 0 {
				t.Errorf("getenv found a value of %d bytes", n)
			}
		})
	}
}

func TestRealEnvironmentForActivities(t *testing.T) {
	t.Parallel()
	inst := instance(t, guest(t), wasi.NewReal([]string{"GUEST=hello"}, nil, nil))
	if d := time.Since(time.Unix(0, int64(call(t, inst, "now")))).Abs(); d > time.Minute {
		t.Errorf("real clock is %s off", d)
	}
	if n := call(t, inst, "getenv"); n != 5 {
		t.Errorf("getenv(GUEST) has %d bytes, want 5", n)
	}
	start := time.Now()
	call(t, inst, "sleep")
	if d := time.Since(start); d < time.Millisecond {
		t.Errorf("time.Sleep(1ms) returned after %s", d)
	}
	if first, second := call(t, inst, "random"), call(t, inst, "random"); first == second {
		t.Errorf("real randomness repeated itself: %d twice", first)
	}
}

func TestStdoutReachesTheWriter(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	inst := instance(t, guest(t), wasi.NewDeterministic(seed(1), &out, nil))
	call(t, inst, "say")
	if out.String() != "hello from the guest\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestHowCallsEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		export string
		real   bool
		// timeout bounds the call; -1 means a context already cancelled.
		timeout time.Duration
		check   func(error) bool
		want    string
		// stderr is what the guest must have written to stderr.
		stderr string
	}{
		{"returns, after a real sleep", "sleep", true, 0,
			func(err error) bool { return err == nil }, "no error", ""},
		{"os.Exit", "exit", false, 0,
			func(err error) bool { var e *wasi.ExitError; return errors.As(err, &e) && e.Code == 3 }, "*wasi.ExitError with code 3", ""},
		{"panic", "panic", false, 0,
			func(err error) bool { var e *TrapError; return errors.As(err, &e) && e.Export == "panic" }, "*TrapError", "panic: the guest gives up"},
		// The Go runtime waits on the clock before it reports a deadlock,
		// and that must not pass for a blocking sleep.
		{"deadlock", "deadlock", false, 0,
			func(err error) bool {
				var e *TrapError
				return errors.As(err, &e) && !errors.Is(err, wasi.ErrBlockingSleep)
			}, "*TrapError", "fatal error: all goroutines are asleep - deadlock!"},
		{"endless loop past the deadline", "spin", false, 200 * time.Millisecond,
			func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }, "context.DeadlineExceeded", ""},
		{"cancelled", "spin", true, -1,
			func(err error) bool { return errors.Is(err, context.Canceled) }, "context.Canceled", ""},
		{"time.Sleep in an orchestration", "sleep", false, 0,
			func(err error) bool {
				return errors.Is(err, wasi.ErrBlockingSleep) && strings.HasSuffix(err.Error(), "(it waited 1ms)")
			}, "wasi.ErrBlockingSleep, having waited 1ms", ""},
		// Stopped at once, long before the deadline.
		{"time.Sleep in a loop in an orchestration", "sleeploop", false, time.Minute,
			func(err error) bool { return errors.Is(err, wasi.ErrBlockingSleep) }, "wasi.ErrBlockingSleep", ""},
	}
	for _, tt := range tests {
		for _, fromSnapshot := range []bool{false, true} {
			if fromSnapshot && tt.real {
				continue
			}
			name := tt.name
			if fromSnapshot {
				name += ", from a snapshot"
			}
			t.Run(name, func(t *testing.T) {
				var stderr bytes.Buffer
				env := wasi.NewDeterministic(seed(1), nil, &stderr)
				if tt.real {
					env = wasi.NewReal(nil, nil, &stderr)
				}
				inst := instanceWith(t, guest(t), Config{Env: env, FromSnapshot: fromSnapshot})
				callCtx, cancel := context.WithCancel(ctx)
				switch {
				case tt.timeout < 0:
					cancel()
				case tt.timeout > 0:
					callCtx, cancel = context.WithTimeout(ctx, tt.timeout)
				}
				defer cancel()
				_, err := inst.Call(callCtx, tt.export)
				if !tt.check(err) {
					t.Fatalf("err = %v, want %s", err, tt.want)
				}
				if !strings.Contains(stderr.String(), tt.stderr) {
					t.Errorf("stderr %q, want it to contain %q", stderr.String(), tt.stderr)
				}
				if _, again := inst.Call(ctx, "now"); err != nil && !errors.Is(again, ErrStopped) {
					t.Errorf("a call after the error: err = %v, want ErrStopped", again)
				}
			})
		}
	}
}

// Every function a Go guest imports is one the host provides, so a Go
// release that adds an import fails here first.
func TestEveryImportIsProvided(t *testing.T) {
	t.Parallel()
	imports := guest(t).Imports()
	if len(imports) == 0 {
		t.Fatal("the guest imports nothing")
	}
	for _, imp := range imports {
		if !wasi.Provides(imp.Module, imp.Name) {
			t.Errorf("the host does not provide %s.%s", imp.Module, imp.Name)
		}
	}
}

func TestCompileAndInstantiateRefuse(t *testing.T) {
	t.Parallel()
	rt, err := NewWazero(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	if _, err := rt.Compile(ctx, []byte("\x00asm\x01\x00\x00\x00\x01\x05")); err == nil || !strings.HasPrefix(err.Error(), "sandbox: not a valid wasm module: ") {
		t.Errorf("truncated module: err = %v", err)
	}
	// A module that exports _initialize, which traps at once.
	trapping := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x04\x01\x60\x00\x00" + // type 0: () -> ()
		"\x03\x02\x01\x00" + // function 0 has type 0
		"\x07\x0f\x01\x0b_initialize\x00\x00" + // export function 0 as _initialize
		"\x0a\x05\x01\x03\x00\x00\x0b") // its body: unreachable
	tests := []struct {
		name string
		wasm []byte
		env  *wasi.Env
		want string
	}{
		{"no Env", trapping, nil, "sandbox: instantiate: Config.Env is nil"},
		{"not a reactor", []byte("\x00asm\x01\x00\x00\x00"), deterministic(), "sandbox: instantiate: the module does not export _initialize, so it is not a WASI reactor; build it with -buildmode=c-shared"},
		{"_initialize traps", trapping, deterministic(), "sandbox: _initialize trapped: wasm error: unreachable\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mod, err := rt.Compile(ctx, tt.wasm)
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close(ctx)
			if _, err := mod.Instantiate(ctx, Config{Env: tt.env}); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to start with %q", err, tt.want)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		limit uint64
		want  string
	}{
		{1000, "sandbox: the memory limit is 1000 bytes, less than one 64 KiB wasm page"},
		{5 << 30, "sandbox: the memory limit is 5368709120 bytes, more than the 4 GiB a wasm32 module can address"},
	} {
		if _, err := NewWazero(ctx, Options{MemoryLimitBytes: tt.limit}); err == nil || err.Error() != tt.want {
			t.Errorf("limit %d: err = %v, want %q", tt.limit, err, tt.want)
		}
	}

	dir := t.TempDir()
	mod := compiledGuest(t, Options{CacheDir: dir, MemoryLimitBytes: 32 << 20})
	if cached, _ := os.ReadDir(dir); len(cached) == 0 {
		t.Errorf("nothing in the compilation cache %s", dir)
	}
	var stderr bytes.Buffer
	inst := instance(t, mod, wasi.NewDeterministic(seed(1), nil, &stderr))
	call(t, inst, "allocate", 8)
	var trap *TrapError
	if _, err := inst.Call(ctx, "allocate", 64); !errors.As(err, &trap) || !strings.Contains(stderr.String(), "fatal error: out of memory") {
		t.Fatalf("allocating 64 MiB under a 32 MiB limit: err = %v, stderr %q", err, stderr.String())
	}
	if size := inst.MemorySize(); size > 32<<20 {
		t.Errorf("memory grew to %d bytes", size)
	}
}
