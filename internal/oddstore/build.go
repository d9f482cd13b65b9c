package oddstore

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
)

// Raw is direct access to a store's database, for what its API refuses.
type Raw interface {
	// Exec runs a statement, with args for its placeholders $1, $2…
	Exec(ctx context.Context, query string, args ...any) error
	// InsertEvent inserts the row of event event of an execution of an
	// instance, holding payload as it is; kind is the event's kind, for
	// a store that keeps it beside the payload.
	InsertEvent(ctx context.Context, instance string, execution, event int64, kind string, payload []byte) error
	// InsertMessage inserts a message for instance, holding payload as it
	// is, visible at visibleAt (Unix nanoseconds); kind is as for
	// InsertEvent.
	InsertMessage(ctx context.Context, instance, kind string, payload []byte, visibleAt int64) error
}

// Backend is the store under test.
type Backend struct {
	// Open opens the store on the test's database, the same one at each
	// call; Run closes what it opens.
	Open func(t *testing.T) store.Store
	// Raw gives direct access to that database. Run uses it only while no
	// store is open on it.
	Raw func(t *testing.T) Raw
	// Check checks that database as durabox check-db does; Run calls it
	// once the host has stopped, and requires a problem named for each
	// odd instance whose rows break the store's invariants.
	Check func(t *testing.T) *store.Check
}

// builder builds the odd database.
type builder struct {
	t   *testing.T
	raw Raw
	// modules are the hashes of the modules deployed, by example.
	modules map[string]string
	// length is the length of each instance's history, once it waits.
	length map[string]int64
}

// The examples the odd database runs.
const (
	hello    = "examples/wasm/hello"
	approval = "examples/wasm/approval"
	retry    = "examples/wasm/retry"
)

// build builds the odd database with a host on b.Open's store, and returns
// the instances it holds, the odd ones with what the host must make of
// them.
func build(t *testing.T, b Backend, cacheDir string) []odd {
	ctx := context.Background()
	bl := &builder{t: t, modules: map[string]string{}, length: map[string]int64{}}
	st := b.Open(t)
	h, err := host.New(st, host.Options{CacheDir: cacheDir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	bl.deploy(h)
	bl.run(h)
	bl.leave(h)
	h.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	bl.raw = b.Raw(t)
	var out []odd
	for _, o := range append(append(append([]odd{}, waiting...), completed...), pending...) {
		if err := o.edit(ctx, bl); err != nil {
			// The database cannot hold it, so no host will meet it.
			t.Logf("%s: the database refused the edit, so the instance is left as it was: %v", o.id, err)
			o.want, o.reason, o.damages = "", "", ""
		}
		out = append(out, o)
	}
	return out
}

// deploy deploys the examples on h.
func (b *builder) deploy(h *host.Host) {
	for _, pkg := range []string{hello, approval, retry} {
		wasm, err := guestbuild.Wasm(pkg)
		if err != nil {
			b.t.Fatal(err)
		}
		info, err := h.Deploy(context.Background(), wasm)
		if err != nil {
			b.t.Fatal(err)
		}
		b.modules[pkg] = info.Hash
	}
}

// start starts orchestration name as instance id.
func (b *builder) start(h *host.Host, name, input, id string) {
	if _, err := h.Start(context.Background(), name, json.RawMessage(input), id); err != nil {
		b.t.Fatal(err)
	}
}

// run runs h until the instances that complete have completed, and those
// that wait are waiting.
func (b *builder) run(h *host.Host) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	for _, o := range completed {
		b.start(h, "Greeting", `"odd"`, o.id)
	}
	for _, o := range waiting {
		b.start(h, "Approval", `{"item": "odd", "timeout": "1h"}`, o.id)
	}
	for _, o := range completed {
		waitFor(b.t, h, o.id, func(i store.Instance) bool { return i.Status == engine.StatusCompleted })
	}
	for _, o := range waiting {
		waitFor(b.t, h, o.id, func(i store.Instance) bool { return i.CustomStatus != "" })
	}
	stop()
	if err := <-done; err != nil {
		b.t.Fatal(err)
	}
}

// leave leaves work in the store for the next host, with h stopped: the
// instances that have not begun, and events for those that are to run a
// turn. It notes how long each waiting instance's history is.
func (b *builder) leave(h *host.Host) {
	ctx := context.Background()
	for _, o := range pending {
		name := "Greeting"
		if o.id == "module-not-wasm" {
			name = "Retry"
		}
		b.start(h, name, `"odd"`, o.id)
	}
	for _, id := range raised {
		if err := h.Raise(ctx, id, "Approval", json.RawMessage(`{"approved": true, "by": "odd"}`), false); err != nil {
			b.t.Fatal(err)
		}
	}
	for _, o := range waiting {
		events, err := h.History(ctx, o.id)
		if err != nil {
			b.t.Fatal(err)
		}
		b.length[o.id] = int64(len(events))
	}
}

// waitFor waits, for a minute at most, until instance id is as ok says.
func waitFor(t *testing.T, h *host.Host, id string, ok func(store.Instance) bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		inst, err := h.Instance(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(inst) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %s, not as the odd database needs it, after a minute", id, inst.Status)
		}
	}
}
