package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/logbuf"
	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/postgres"
	"github.com/durabox/durabox/store/sqlite"
)

// scheduledGuest holds Count, whose runs count on from the last one's
// result.
const scheduledGuest = "host/testdata/guests/scheduled"

// fakeClock is a host's clock that a test moves.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Add(d time.Duration) { c.ns.Add(int64(d)) }
func (c *fakeClock) options() host.Options {
	return host.Options{Clock: c.Now, SchedulePoll: 5 * time.Millisecond}
}

// at0 is when the schedule tests begin: 30 seconds into a minute, so
// that a schedule every minute has its first slot at at0+30s.
var at0 = time.Date(2026, 11, 27, 17, 0, 30, 0, time.UTC)

// slot is the n-th slot of a schedule every minute created at at0.
func slot(n int) time.Time { return at0.Add(time.Duration(n)*time.Minute - 30*time.Second) }

// every is a schedule of Count every minute, with plan as its input.
func every(name, overlap, plan string) api.ScheduleRequest {
	return api.ScheduleRequest{Name: name, Every: "1m", Orchestration: "Count", Input: json.RawMessage(plan), Overlap: overlap}
}

// startScheduled runs a host on a fake clock at at0, with the scheduled
// guest deployed.
func startScheduled(t *testing.T) (*testHost, *fakeClock) {
	t.Helper()
	clock := newFakeClock(at0)
	h := startHost(t, clock.options())
	h.deploy(t, scheduledGuest)
	return h, clock
}

// createSchedule creates the schedule req on h.
func createSchedule(t *testing.T, h *host.Host, req api.ScheduleRequest) api.Schedule {
	t.Helper()
	sc, err := h.CreateSchedule(context.Background(), req)
	if err != nil {
		t.Fatalf("CreateSchedule %s: %v", req.Name, err)
	}
	return sc
}

// runsUntil waits until the schedule's runs satisfy done, and returns
// them, oldest first.
func runsUntil(t *testing.T, h *host.Host, name, what string, done func(sc api.Schedule) bool) []api.ScheduleRun {
	t.Helper()
	var sc api.Schedule
	waitUntil(t, what, func(ctx context.Context) (bool, error) {
		var err error
		sc, err = h.Schedule(ctx, name)
		return err == nil && done(sc), err
	})
	runs := sc.Runs
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs
}

// decided waits until the schedule has decided n slots.
func decided(t *testing.T, h *host.Host, name string, n int) []api.ScheduleRun {
	t.Helper()
	return runsUntil(t, h, name, fmt.Sprintf("%s decided %d slots", name, n), func(sc api.Schedule) bool { return len(sc.Runs) >= n })
}

// outcomes describes runs as slot number and outcome: "1 started".
func outcomes(runs []api.ScheduleRun) []string {
	var out []string
	for _, r := range runs {
		n := int(r.Slot.Sub(slot(0)) / time.Minute)
		out = append(out, fmt.Sprintf("%d %s", n, r.Outcome))
	}
	return out
}

// countOf is the Result of a run of Count.
func countOf(t *testing.T, inst store.Instance) string {
	t.Helper()
	if inst.Status != engine.StatusCompleted {
		return fmt.Sprintf("%s: %v", inst.Status, inst.Failure)
	}
	var r struct {
		Count int    `json:"count"`
		Last  string `json:"last"`
	}
	if err := json.Unmarshal(inst.Result, &r); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d after %s", r.Count, r.Last)
}

// TestScheduleFiresEachSlotOnceAcrossRestarts: a schedule every minute
// fires its first slot; the host stops, and three slots pass; a host on
// the same SQLite file, reopened, fires each of them once, in order, and
// the instances are the slots' (name:slot), each started once.
func TestScheduleFiresEachSlotOnceAcrossRestarts(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(at0)
	path := filepath.Join(t.TempDir(), "durabox.db")
	open := func() *sqlite.Store { return openSQLite(t, path) }
	st := open()
	h := startHostOn(t, st, clock.options())
	h.deploy(t, scheduledGuest)
	createSchedule(t, h.Host, every("tick", "allow-all", `{}`))
	clock.Add(time.Minute)
	runs := decided(t, h.Host, "tick", 1)
	h.wait(t, runs[0].InstanceID)
	h.stop()
	st.Close()

	clock.Add(3 * time.Minute)
	st = open()
	t.Cleanup(func() { st.Close() })
	h = startHostOn(t, st, clock.options())
	runs = decided(t, h.Host, "tick", 4)
	want := []string{"1 started", "2 started", "3 started", "4 started"}
	if got := outcomes(runs); !reflect.DeepEqual(got, want) {
		t.Fatalf("runs %v; want %v", got, want)
	}
	for i, r := range runs {
		if id := "tick:" + slot(i+1).Format(time.RFC3339); r.InstanceID != id {
			t.Errorf("run %d is instance %s; want %s", i+1, r.InstanceID, id)
		}
		h.wait(t, r.InstanceID)
	}
	sc, err := h.Schedule(context.Background(), "tick")
	if err != nil || sc.Started != 4 || sc.Missed != 0 || !sc.NextRuns[0].Equal(slot(5)) {
		t.Fatalf("schedule %+v, %v; want 4 started, none missed, next at %v", sc, err, slot(5))
	}
}

// TestScheduleTwoHostsOnPostgres: two hosts on one PostgreSQL database,
// with one clock, fire each of ten slots once between them.
func TestScheduleTwoHostsOnPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	clock := newFakeClock(at0)
	var hosts []*host.Host
	var counts []*metrics.Metrics
	for range 2 {
		st, err := postgres.Open(url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		opts := clock.options()
		opts.Shared, opts.CacheDir, opts.Metrics = true, host.TestCacheDir, metrics.New()
		// The clock jumps a minute at a time, whatever the hosts are doing:
		// a lease shorter than the test's ten minutes would expire under
		// a turn running slowly on a loaded machine, and the other host
		// would take its instance again and again, until the delivery
		// count gave up on it.
		opts.Lease = time.Hour
		counts = append(counts, opts.Metrics)
		h, err := host.New(st, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { h.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done; h.Close() })
		hosts = append(hosts, h)
	}
	wasm, err := guestbuild.Wasm(scheduledGuest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hosts[0].Deploy(context.Background(), wasm); err != nil {
		t.Fatal(err)
	}
	createSchedule(t, hosts[1], every("tick", "allow-all", `{}`))
	for n := 1; n <= 10; n++ {
		clock.Add(time.Minute)
		decided(t, hosts[n%2], "tick", n)
	}
	sc, err := hosts[0].Schedule(context.Background(), "tick")
	if err != nil {
		t.Fatal(err)
	}
	runs := sc.Runs
	want := []string{"10 started", "9 started", "8 started", "7 started", "6 started", "5 started", "4 started", "3 started", "2 started", "1 started"}
	if got := outcomes(runs); !reflect.DeepEqual(got, want) || sc.Started != 10 {
		t.Fatalf("runs %v, %d started; want %v", got, sc.Started, want)
	}
	for _, r := range runs {
		inst, err := hosts[0].Wait(context.Background(), r.InstanceID)
		if err != nil || inst.Status != engine.StatusCompleted {
			t.Fatalf("run %s: %v, %v", r.InstanceID, inst.Status, err)
		}
	}
	var started []float64
	for _, m := range counts {
		started = append(started, counted(t, m, "durabox_schedule_fires_total", "outcome", "started", "schedule", "tick"))
	}
	if started[0]+started[1] != 10 {
		t.Fatalf("the hosts counted %v slots started; want 10 between them", started)
	}
	t.Logf("slots started by each host: %v", started)
}

// TestScheduleOverlap: a run held running when the next slot comes: skip
// passes over it; buffer-one holds it back, passes over the one after,
// and starts it when the run ends; allow-all starts it; cancel-other
// cancels the run and starts the slot once it has ended.
func TestScheduleOverlap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		overlap string
		// after is how many slots have been decided once each of slots
		// 1 to 3 has come.
		after []int
		// release ends the first run (raising "go") after slot 3, and
		// released is how many slots have been decided then.
		release  bool
		released int
		want     []string
		// first is how the first run ends.
		first string
	}{
		{"skip", []int{1, 2, 3}, true, 3, []string{"1 started", "2 skipped", "3 skipped"}, "1 after none"},
		{"buffer-one", []int{1, 2, 3}, true, 4, []string{"1 started", "2 buffered", "3 skipped", "2 started"}, "1 after none"},
		{"allow-all", []int{1, 2, 3}, true, 3, []string{"1 started", "2 started", "3 started"}, "1 after none"},
		{"cancel-other", []int{1, 3, 5}, false, 5, []string{"1 started", "2 buffered", "2 started", "3 buffered", "3 started"}, "Canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.overlap, func(t *testing.T) {
			t.Parallel()
			h, clock := startScheduled(t)
			createSchedule(t, h.Host, every("held", tt.overlap, `{"hold": true}`))
			var runs []api.ScheduleRun
			for _, n := range tt.after {
				clock.Add(time.Minute)
				runs = decided(t, h.Host, "held", n)
			}
			if tt.release {
				if err := h.Raise(context.Background(), runs[0].InstanceID, "go", nil, true); err != nil {
					t.Fatal(err)
				}
				runs = decided(t, h.Host, "held", tt.released)
			}
			if got := outcomes(runs); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("runs %v; want %v", got, tt.want)
			}
			first := h.wait(t, runs[0].InstanceID)
			if got := countOf(t, first); !strings.HasPrefix(got, tt.first) {
				t.Fatalf("the first run: %s; want %s", got, tt.first)
			}
		})
	}
}

// TestScheduleCatchup: after downtime, the slots within the catch-up
// window fire once each, in order; those older are passed over and
// counted as missed.
func TestScheduleCatchup(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(at0)
	path := filepath.Join(t.TempDir(), "durabox.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := startHostOn(t, st, clock.options())
	h.deploy(t, scheduledGuest)
	req := every("late", "allow-all", `{}`)
	req.CatchupWindow = "5m"
	createSchedule(t, h.Host, req)
	h.stop()

	clock.Add(20 * time.Minute) // slots 1 to 20 pass: 16 to 20 are within 5m
	opts := clock.options()
	opts.Metrics = metrics.New()
	h = startHostOn(t, st, opts)
	runs := decided(t, h.Host, "late", 5)
	want := []string{"16 started", "17 started", "18 started", "19 started", "20 started"}
	if got := outcomes(runs); !reflect.DeepEqual(got, want) {
		t.Fatalf("runs %v; want %v", got, want)
	}
	sc, err := h.Schedule(context.Background(), "late")
	if err != nil || sc.Missed != 15 || sc.Started != 5 {
		t.Fatalf("schedule %+v, %v; want 15 missed, 5 started", sc, err)
	}
	fires := func(outcome string) float64 {
		return counted(t, opts.Metrics, "durabox_schedule_fires_total", "outcome", outcome, "schedule", "late")
	}
	if missed, started := fires("missed"), fires("started"); missed != 15 || started != 5 {
		t.Fatalf("durabox_schedule_fires_total: %v missed, %v started; want 15 and 5", missed, started)
	}
}

// TestScheduleLastRun: each run is handed the last run's result, or its
// failure.
func TestScheduleLastRun(t *testing.T) {
	t.Parallel()
	h, clock := startScheduled(t)
	createSchedule(t, h.Host, every("counter", "", `{"fail": 3}`))
	var got []string
	for n := 1; n <= 5; n++ {
		clock.Add(time.Minute)
		runs := decided(t, h.Host, "counter", n)
		got = append(got, countOf(t, h.wait(t, runs[n-1].InstanceID)))
	}
	want := []string{"1 after none", "2 after count 1", "Failed", "1 after failed: run 3 fails", "2 after count 1"}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("runs %q; want %q", got, want)
		}
	}
}

// TestSchedulePauseResumeTriggerDelete: a paused schedule fires no slot
// (while another fires its own) but can be triggered by hand; resumed, it
// goes on from the next slot; deleted, it is gone and its runs stay.
func TestSchedulePauseResumeTriggerDelete(t *testing.T) {
	t.Parallel()
	h, clock := startScheduled(t)
	ctx := context.Background()
	createSchedule(t, h.Host, every("paused", "", `{}`))
	createSchedule(t, h.Host, every("witness", "", `{}`))
	if err := h.PauseSchedule(ctx, "paused", "maintenance"); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	decided(t, h.Host, "witness", 1)
	sc, err := h.Schedule(ctx, "paused")
	if err != nil || len(sc.Runs) != 0 || !sc.Paused || sc.Note != "maintenance" || len(sc.NextRuns) != 0 {
		t.Fatalf("paused schedule %+v, %v; want no run, paused for maintenance, no next run", sc, err)
	}
	run, err := h.TriggerSchedule(ctx, "paused")
	if err != nil || run.Outcome != "started" || !run.Manual || run.InstanceID != "paused:manual:"+clock.Now().Format(time.RFC3339Nano) {
		t.Fatalf("TriggerSchedule: %+v, %v; want a manual run started", run, err)
	}
	if inst := h.wait(t, run.InstanceID); countOf(t, inst) != "1 after none" {
		t.Fatalf("the manual run: %s", countOf(t, inst))
	}

	clock.Add(time.Minute)
	if err := h.ResumeSchedule(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	runs := decided(t, h.Host, "paused", 2)
	if !runs[1].Slot.Equal(slot(3)) || runs[1].Manual {
		t.Fatalf("after resume: %+v; want slot 3 (slot 2 came while paused)", runs)
	}
	if inst := h.wait(t, runs[1].InstanceID); countOf(t, inst) != "2 after count 1" {
		t.Fatalf("the run after the manual one: %s", countOf(t, inst))
	}

	if err := h.DeleteSchedule(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		h.DeleteSchedule(ctx, "paused"), h.PauseSchedule(ctx, "paused", ""), h.ResumeSchedule(ctx, "paused"),
		func() error { _, err := h.Schedule(ctx, "paused"); return err }(),
		func() error { _, err := h.TriggerSchedule(ctx, "paused"); return err }(),
	} {
		if !errors.Is(err, api.ErrScheduleNotFound) || !strings.Contains(err.Error(), `"paused"`) {
			t.Errorf("after delete: %v; want schedule \"paused\" not found", err)
		}
	}
	if _, err := h.Instance(ctx, runs[1].InstanceID); err != nil {
		t.Fatalf("a deleted schedule's run: %v; want it kept", err)
	}
	list, err := h.Schedules(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "witness" {
		t.Fatalf("Schedules: %+v, %v; want witness alone", list, err)
	}
}

// TestScheduleJitter: a slot with jitter starts at its slot plus its
// jitter, which the schedule's next runs show: not when another
// schedule's slot of the same time starts.
func TestScheduleJitter(t *testing.T) {
	t.Parallel()
	h, clock := startScheduled(t)
	req := every("jittery", "", `{}`)
	req.Jitter = "50s"
	sc := createSchedule(t, h.Host, req)
	createSchedule(t, h.Host, every("witness", "", `{}`))
	late := sc.NextRuns[0].Sub(slot(1))
	if late <= time.Second || late >= 50*time.Second {
		t.Fatalf("the first slot is %v late; want it within the jitter (this test needs it past 1s)", late)
	}
	clock.Add(30*time.Second + late - time.Second)
	decided(t, h.Host, "witness", 1)
	if sc, err := h.Schedule(context.Background(), "jittery"); err != nil || len(sc.Runs) != 0 {
		t.Fatalf("a second before its jitter: %+v, %v; want no run", sc.Runs, err)
	}
	clock.Add(time.Second)
	runs := decided(t, h.Host, "jittery", 1)
	if !runs[0].Slot.Equal(slot(1)) || !runs[0].FiredAt.Equal(sc.NextRuns[0]) {
		t.Fatalf("run %+v; want slot %v fired at %v", runs[0], slot(1), sc.NextRuns[0])
	}
}

// TestScheduleStoredBadly: a schedule row that does not read (edited by
// hand) holds up nothing: the others fire, it is shown without next runs,
// and its error is logged once, not at every pass.
func TestScheduleStoredBadly(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(at0)
	var logs logbuf.Buffer
	opts := clock.options()
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h := startHost(t, opts)
	h.deploy(t, scheduledGuest)
	bad := store.Schedule{Name: "bad", Cron: "every day", Orchestration: "Count", Overlap: "whenever", NextSlot: slot(1), CreatedAt: at0, UpdatedAt: at0}
	if err := h.st.CreateSchedule(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	createSchedule(t, h.Host, every("good", "", `{}`))
	for n := 1; n <= 3; n++ {
		clock.Add(time.Minute)
		decided(t, h.Host, "good", n)
	}
	sc, err := h.Schedule(context.Background(), "bad")
	if err != nil || len(sc.NextRuns) != 0 || len(sc.Runs) != 0 {
		t.Fatalf("the bad schedule: %+v, %v; want it shown, with no next run and no run", sc, err)
	}
	if n := strings.Count(logs.String(), `msg="cannot fire a schedule`); n != 1 || !strings.Contains(logs.String(), `the cron expression \"every day\" does not parse`) {
		t.Fatalf("the log says %d times that it cannot fire, want once, saying why:\n%s", n, logs.String())
	}
}

// TestScheduleRunThatCannotStart: a slot whose run cannot start (its
// module was removed) is recorded failed, saying why, and the schedule
// goes on to its next slot.
func TestScheduleRunThatCannotStart(t *testing.T) {
	t.Parallel()
	h, clock := startScheduled(t)
	mods, err := h.Modules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req := every("orphan", "", `{}`)
	req.Module = mods[0].Hash
	createSchedule(t, h.Host, req)
	if err := h.RemoveModule(context.Background(), mods[0].Hash); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	runs := decided(t, h.Host, "orphan", 1)
	if runs[0].Outcome != "failed" || runs[0].InstanceID != "" || !strings.Contains(runs[0].Error, "module not found") {
		t.Fatalf("run %+v; want it failed, saying its module is not found", runs[0])
	}
	clock.Add(time.Minute)
	if runs := decided(t, h.Host, "orphan", 2); !runs[1].Slot.Equal(slot(2)) {
		t.Fatalf("runs %+v; want the next slot decided too", runs)
	}
}

// TestScheduleRefused: what a schedule cannot be is refused, saying why.
func TestScheduleRefused(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	info := h.deploy(t, scheduledGuest)
	ok := every("ok", "", `{}`)
	ok.Module = info.Hash[:10]
	if sc := createSchedule(t, h.Host, ok); sc.Module != info.Hash {
		t.Fatalf("a schedule on module %s runs on %q; want its whole hash %s", ok.Module, sc.Module, info.Hash)
	}
	tests := []struct {
		name string
		edit func(r *api.ScheduleRequest)
		want string
		is   error
	}{
		{"bad cron", func(r *api.ScheduleRequest) { r.Every, r.Cron = "", "*/5 * * *" }, `the cron expression "*/5 * * *" does not parse`, api.ErrBadInput},
		{"bad field", func(r *api.ScheduleRequest) { r.Every, r.Cron = "", "61 * * * *" }, "does not parse", api.ErrBadInput},
		{"bad timezone", func(r *api.ScheduleRequest) { r.Every, r.Cron, r.Timezone = "", "0 3 * * *", "Mars/Olympus" }, `the time zone "Mars/Olympus" is not one this host knows`, api.ErrBadInput},
		{"never", func(r *api.ScheduleRequest) { r.Every, r.Cron = "", "0 0 30 2 *" }, "names no time in the next five years", api.ErrBadInput},
		{"@every", func(r *api.ScheduleRequest) { r.Every, r.Cron = "", "@every 5m" }, "use --every", api.ErrBadInput},
		{"both", func(r *api.ScheduleRequest) { r.Cron = "* * * * *" }, "not both", api.ErrBadInput},
		{"neither", func(r *api.ScheduleRequest) { r.Every = "" }, "needs a cron expression", api.ErrBadInput},
		{"part of a second", func(r *api.ScheduleRequest) { r.Every = "1500ms" }, "whole seconds", api.ErrBadInput},
		{"bad interval", func(r *api.ScheduleRequest) { r.Every = "often" }, `the interval "often" is not a duration`, api.ErrBadInput},
		{"bad overlap", func(r *api.ScheduleRequest) { r.Overlap = "queue" }, `the overlap policy "queue" is not one of`, api.ErrBadInput},
		{"bad jitter", func(r *api.ScheduleRequest) { r.Jitter = "-1s" }, "the jitter", api.ErrBadInput},
		{"bad name", func(r *api.ScheduleRequest) { r.Name = "a:b" }, "the schedule name", api.ErrBadInput},
		{"bad input", func(r *api.ScheduleRequest) { r.Input = json.RawMessage(`{`) }, "the input", api.ErrBadInput},
		{"unknown module", func(r *api.ScheduleRequest) { r.Module = "ffffffff" }, "ffffffff", api.ErrModuleNotFound},
		{"unknown orchestration", func(r *api.ScheduleRequest) { r.Orchestration = "Nope" }, `"Nope": no deployed module registers it`, api.ErrUnknownOrchestration},
		{"taken", func(r *api.ScheduleRequest) { r.Name = "ok" }, `"ok"; delete it first`, api.ErrScheduleExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := every("s", "", `{}`)
			tt.edit(&req)
			_, err := h.CreateSchedule(context.Background(), req)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CreateSchedule: %v; want %v saying %q", err, tt.is, tt.want)
			}
		})
	}
}

// pairedFires is a store whose FireSchedule holds each fire until another
// is under way (or, at the most, pairWait has passed), and records the
// most fires under way at once.
type pairedFires struct {
	store.Store
	pair     chan struct{}
	mu       sync.Mutex
	in, most int
}

const pairWait = 5 * time.Second

func (s *pairedFires) FireSchedule(ctx context.Context, f store.ScheduleFire) (store.ScheduleRun, error) {
	s.mu.Lock()
	s.in++
	s.most = max(s.most, s.in)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.in--
		s.mu.Unlock()
	}()
	t := time.NewTimer(pairWait)
	defer t.Stop()
	select {
	case s.pair <- struct{}{}:
	case <-s.pair:
	case <-t.C:
	}
	return s.Store.FireSchedule(ctx, f)
}

// TestSchedulesDueTogetherFireTogether: ten schedules whose slots fall
// at one time are fired at once, not one after another's commit (under
// load, the last of them fired ten commits late).
func TestSchedulesDueTogetherFireTogether(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(at0)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fires := &pairedFires{Store: st, pair: make(chan struct{})}
	h := runHost(t, st, fires, clock.options())
	h.deploy(t, scheduledGuest)
	const n = 10
	for i := range n {
		createSchedule(t, h.Host, every(fmt.Sprint("tick-", i), "allow-all", `{}`))
	}
	clock.Add(time.Minute)
	for i := range n {
		decided(t, h.Host, fmt.Sprint("tick-", i), 1)
	}
	fires.mu.Lock()
	defer fires.mu.Unlock()
	if fires.most < 2 {
		t.Fatalf("the ten slots due at one time were fired one at a time (at most %d under way at once); want them fired together", fires.most)
	}
}
