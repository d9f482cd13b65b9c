package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// The determinism suite drives guests that observe what a program can
// observe (a guest full of nondeterminism, and one that decides by its own
// heap) through the engine directly, with a script of messages and times:
// all turns on one live wasm instance or every turn on a fresh instance
// that replays the whole history first, each round's messages batched in
// one turn or one per turn. Then through the host's own turns, with the
// instance cache on, evicting, and off. The histories must be byte for
// byte the same every way.

// round is one step of the script: every completion that became ready, at
// one time.
type scriptMode struct {
	// live keeps one instance; otherwise every turn replays on a fresh one.
	live bool
	// batched delivers a round's messages in one turn; otherwise one per turn.
	batched bool
}

func TestLiveAndReplayedHistoriesAreByteIdentical(t *testing.T) {
	t.Parallel()
	h := newBareHost(t)
	wasm, err := guestbuild.Wasm("host/testdata/guests/chaos")
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Deploy(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	inst := store.Instance{ID: "chaos-1", Name: "Chaos", ModuleHash: info.Hash, ExecutionID: 1, Input: json.RawMessage(`3`)}

	reference := runScriptEveryWay(t, h, inst)
	// The guest really drew different values as it went (the suite would
	// prove nothing if every observation were the same), and another
	// instance, with another seed, draws others.
	var events []engine.Event
	json.Unmarshal(reference, &events)
	for _, source := range []string{"clock", "random", "select"} {
		distinct := map[string]bool{}
		for _, s := range observations(events, source) {
			distinct[s] = true
		}
		if n := len(distinct); n != 3 {
			t.Errorf("%d distinct %s observations in 3 rounds, want 3", n, source)
		}
	}
	other := inst
	other.ID = "chaos-2"
	if string(runScript(t, h, other, scriptMode{live: true, batched: true})) == string(reference) {
		t.Fatal("another instance drew exactly the same values")
	}
	if last := events[len(events)-1]; last.Kind != engine.OrchestrationCompleted || !strings.HasPrefix(string(last.Result), `"18 observations, last maps `) {
		t.Fatalf("the orchestration ended with %s", last.String())
	}
}

// observations returns the chaos guest's observations of source in a
// history, in order, without the source's name.
func observations(events []engine.Event, source string) []string {
	var out []string
	for _, e := range events {
		if e.Kind == engine.ActivityScheduled {
			var s string
			json.Unmarshal(e.Input, &s)
			if src, rest, _ := strings.Cut(s, " "); src == source {
				out = append(out, rest)
			}
		}
	}
	return out
}

// What the SDK's docs promise about randomness, per source: math/rand and
// math/rand/v2 draw the same stream in every instance of a module (the Go
// runtime seeds them while it starts, under the start's fixed Env), while
// crypto/rand, ctx.Rand and ctx.NewGUID differ per instance. Each replays
// exactly (TestLiveAndReplayedHistoriesAreByteIdentical).
func TestRandomnessPerInstance(t *testing.T) {
	t.Parallel()
	h := newBareHost(t)
	wasm, err := guestbuild.Wasm("host/testdata/guests/chaos")
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Deploy(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	var drawn [2][]string
	for i := range drawn {
		inst := store.Instance{ID: fmt.Sprint("chaos-", i), Name: "Chaos", ModuleHash: info.Hash, ExecutionID: 1, Input: json.RawMessage(`1`)}
		var events []engine.Event
		json.Unmarshal(runScript(t, h, inst, scriptMode{live: true, batched: true}), &events)
		random := observations(events, "random")
		if len(random) != 1 {
			t.Fatalf("instance %s: random observations %q", inst.ID, random)
		}
		if drawn[i] = strings.Fields(random[0]); len(drawn[i]) != 6 {
			t.Fatalf("instance %s: random observation %q", inst.ID, random[0])
		}
	}
	for i, source := range []string{"math/rand", "math/rand/v2", "crypto/rand", "ctx.Rand", "ctx.NewGUID"} {
		same := drawn[0][i] == drawn[1][i]
		if perInstance := i >= 2; same == perInstance {
			t.Errorf("%s: two instances drew %s and %s; per instance: %v", source, drawn[0][i], drawn[1][i], perInstance)
		}
	}
}

// runScriptEveryWay runs inst's script in every mode and returns the
// history, once every mode has given it byte for byte.
func runScriptEveryWay(t *testing.T, h *Host, inst store.Instance) []byte {
	t.Helper()
	reference := runScript(t, h, inst, scriptMode{live: true, batched: true})
	for _, mode := range []scriptMode{{live: true, batched: false}, {live: false, batched: true}, {live: false, batched: false}} {
		if got := runScript(t, h, inst, mode); string(got) != string(reference) {
			t.Fatalf("mode %+v gave another history:\n%s\nreference (live, batched):\n%s", mode, got, reference)
		}
	}
	return reference
}

// runScript runs inst's orchestration (which calls only Record) to its
// end: every Record call completes with its input one second after the turn that scheduled it.
func runScript(t *testing.T, h *Host, inst store.Instance, mode scriptMode) []byte {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 123456789, time.UTC)
	var history []engine.Event
	round := []engine.Event{{Kind: engine.OrchestrationStarted, Name: inst.Name, InstanceID: inst.ID, Input: inst.Input}}
	l := h.newLive(ctx, inst, Seed(inst.ID, inst.ExecutionID))
	defer func() { l.close(ctx) }()
	for len(round) > 0 {
		turns := [][]engine.Event{round}
		if !mode.batched {
			turns = nil
			for _, m := range round {
				turns = append(turns, []engine.Event{m})
			}
		}
		round = nil
		for _, messages := range turns {
			if !mode.live {
				l.close(ctx)
				l = h.newLive(ctx, inst, Seed(inst.ID, inst.ExecutionID))
			}
			res, err := l.turn(engine.TurnInput{History: history, Messages: messages, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err != nil {
				t.Fatalf("mode %+v: %v", mode, res.Err)
			}
			history = append(history, res.NewEvents...)
			for _, a := range res.Activities {
				round = append(round, engine.Event{Kind: engine.ActivityCompleted, ScheduleID: a.ScheduleID, Result: a.Input})
			}
		}
		now = now.Add(time.Second)
	}
	b, err := json.MarshalIndent(history, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newBareHost returns a host on a fresh store whose dispatchers do not run,
// so a test can drive turns itself.
func newBareHost(t *testing.T) *Host { return newBareHostWith(t, Options{}) }

func newBareHostWith(t testing.TB, opts Options) *Host {
	t.Helper()
	return newBareHostAt(t, filepath.Join(t.TempDir(), "durabox.db"), opts)
}

// newBareHostAt is newBareHostWith on the SQLite file at path.
func newBareHostAt(t testing.TB, path string, opts Options) *Host {
	t.Helper()
	if opts.CacheDir == "" {
		opts.CacheDir = TestCacheDir
	}
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		st.Close()
	})
	return h
}

// lockNext locks the next instance, if there is one.
func lockNext(ctx context.Context, st store.Store, now time.Time, lease time.Duration) (*store.WorkItem, error) {
	items, err := st.LockNextInstances(ctx, now, lease, 1, nil)
	if len(items) == 0 {
		return nil, err
	}
	return items[0], err
}

// leaseNext leases the next activity task, if there is one.
func leaseNext(ctx context.Context, st store.Store, now time.Time, lease time.Duration) (*store.ActivityWork, error) {
	ws, err := st.LockNextActivities(ctx, now, lease, 1, nil)
	if len(ws) == 0 {
		return nil, err
	}
	return ws[0], err
}

// TestCacheDoesNotChangeHistories runs one workload through the host's own
// turns and activities three times: with every instance kept live, with
// one kept live (so instances are evicted and replayed as they take
// turns), and with none. Every history must be byte for byte the same.
func TestCacheDoesNotChangeHistories(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm("host/testdata/guests/chaos")
	if err != nil {
		t.Fatal(err)
	}
	runWorkloadEveryWay(t, wasm, "Chaos", `3`)
}

// runWorkloadEveryWay runs runWorkload with every instance kept live, with
// one kept live (so instances are evicted and replayed as they take turns)
// and with none, and replays every instance on a fresh guest at the end. It
// returns the histories, once every run has given them byte for byte and
// every replay has matched them.
func runWorkloadEveryWay(t *testing.T, wasm []byte, name, input string) []byte {
	t.Helper()
	now := time.Date(2026, 11, 22, 12, 0, 0, 123456789, time.UTC)
	clock := func() time.Time { return now }
	// One compilation serves every host.
	cache := t.TempDir()
	var reference []byte
	for _, opts := range []Options{{Clock: clock, CacheDir: cache}, {Clock: clock, CacheDir: cache, MaxLiveInstances: 1}, {Clock: clock, CacheDir: cache, NoLiveCache: true}} {
		h := newBareHostWith(t, opts)
		got := runWorkload(t, h, wasm, now, name, input)
		for _, id := range workloadIDs {
			rep, err := h.Replay(context.Background(), id, api.ReplayRequest{})
			if err == nil {
				err = rep.Err()
			}
			if err != nil {
				t.Fatalf("with MaxLiveInstances %d, NoLiveCache %v: %v", opts.MaxLiveInstances, opts.NoLiveCache, err)
			}
		}
		if reference == nil {
			reference = got
			continue
		}
		if string(got) != string(reference) {
			t.Fatalf("with MaxLiveInstances %d, NoLiveCache %v the histories differ:\n%s\nwith every instance live:\n%s", opts.MaxLiveInstances, opts.NoLiveCache, got, reference)
		}
	}
	return reference
}

// TestHeapIsTheSameLiveAndReplayed runs a guest that decides by its own
// heap (memory statistics, finalizers run after a collection, allocations
// sized by what it saw) live, on a fresh instance for every turn, through
// the host's turns with every instance kept live, with one kept live and
// with none, and replays each instance on a fresh one at the end: every
// history must be byte for byte the same, and every replay must match.
func TestHeapIsTheSameLiveAndReplayed(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm("host/testdata/guests/heap")
	if err != nil {
		t.Fatal(err)
	}
	h := newBareHost(t)
	info, err := h.Deploy(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	inst := store.Instance{ID: "a", Name: "Heap", ModuleHash: info.Hash, ExecutionID: 1, Input: json.RawMessage(`8`)}
	reference := runScriptEveryWay(t, h, inst)
	runWorkloadEveryWay(t, wasm, "Heap", `8`)

	// The guest saw its heap change: collections ran, finalizers ran, and
	// no two observations were alike.
	var events []engine.Event
	json.Unmarshal(reference, &events)
	seen := map[string]bool{}
	var last string
	for _, e := range events {
		if e.Kind == engine.CustomStatusSet {
			_, last, _ = strings.Cut(e.CustomStatus, ": ")
			seen[last] = true
		}
	}
	if len(seen) != 8 || strings.Contains(last, " gcs 0 ") || strings.HasSuffix(last, " finalized 0") {
		t.Errorf("%d distinct observations in 8 rounds, the last %q; want 8, the last after a collection and finalizers", len(seen), last)
	}
}

// TestGuestLinesAreLoggedOnce replays an orchestration after every turn:
// what it prints, and what it logs through its Context's logger, reach the
// host's log once, when each step first runs, not again on every replay.
func TestGuestLinesAreLoggedOnce(t *testing.T) {
	t.Parallel()
	wasm, err := guestbuild.Wasm("host/testdata/guests/heap")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	now := time.Date(2026, 11, 22, 12, 0, 0, 123456789, time.UTC)
	h := newBareHostWith(t, Options{Clock: func() time.Time { return now }, NoLiveCache: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	ctx := context.Background()
	if _, err := h.Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Start(ctx, "Heap", json.RawMessage(`4`), "a"); err != nil {
		t.Fatal(err)
	}
	drive(t, h, now, false)
	for r := range 4 {
		for _, line := range []string{fmt.Sprintf(`msg="guest: round %d"`, r), fmt.Sprintf(`msg="guest: round n=%d"`, r)} {
			if n := strings.Count(log.String(), line); n != 1 {
				t.Errorf("%q is in the log %d times, want once:\n%s", line, n, log.String())
			}
		}
	}
}

// workloadIDs are the instances runWorkload starts.
var workloadIDs = []string{"a", "b", "c"}

// runWorkload starts three instances of orchestration name with input and
// drives them to the end in a fixed order: every pending turn, then every
// pending activity, again and again. It returns every history.
func runWorkload(t *testing.T, h *Host, wasm []byte, now time.Time, name, input string) []byte {
	t.Helper()
	ctx := context.Background()
	if _, err := h.Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	for _, id := range workloadIDs {
		if _, err := h.Start(ctx, name, json.RawMessage(input), id); err != nil {
			t.Fatal(err)
		}
	}
	drive(t, h, now, false)
	histories := map[string][]engine.Event{}
	for _, id := range workloadIDs {
		inst, err := h.Instance(ctx, id)
		if err != nil || inst.Status != engine.StatusCompleted {
			t.Fatalf("instance %s: %+v, %v", id, inst, err)
		}
		if histories[id], err = h.History(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.MarshalIndent(histories, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// drive runs every pending turn, then every pending activity (in the order
// they were scheduled, or the reverse), again and again until there is
// nothing left to run.
func drive(t *testing.T, h *Host, now time.Time, reverse bool) {
	t.Helper()
	for progress := true; progress; {
		progress = runTurns(t, h, now)
		ran, err := h.RunActivities(context.Background(), now, reverse)
		if err != nil {
			t.Fatal(err)
		}
		progress = progress || ran > 0
	}
}
