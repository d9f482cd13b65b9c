package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
)

// TestHistoryWarning: an instance whose history grows past
// Options.HistoryWarning runs on (nothing is refused); the host logs it
// once, when the turn that takes it past commits, and GET
// /v1/instances/{id} warns while it is past. At the warning length itself,
// nothing is said.
func TestHistoryWarning(t *testing.T) {
	t.Parallel()
	// WaitsForGo calls an activity, then waits: n events of history.
	run := func(opts Options) (*Host, int) {
		h := conformanceHost(t, opts)
		startEach(t, h, `null`, "WaitsForGo")
		drive(t, h, conformanceNow, false)
		events, err := h.History(context.Background(), "WaitsForGo")
		if err != nil {
			t.Fatal(err)
		}
		return h, len(events)
	}
	_, n := run(Options{})
	for _, tt := range []struct {
		name    string
		warning int
		warned  bool
	}{{"past the warning", n - 1, true}, {"at the warning", n, false}} {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			h, _ := run(Options{HistoryWarning: tt.warning, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if got, want := strings.Count(log.String(), "history past the warning length"), map[bool]int{true: 1}[tt.warned]; got != want {
				t.Errorf("with %d events and the warning at %d the host logged the warning %d times, want %d:\n%s", n, tt.warning, got, want, log.String())
			}
			handler, err := server.New(h, server.Options{Metrics: h.Metrics()})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/v1/instances/WaitsForGo", nil))
			var d api.InstanceDetails
			if err := json.Unmarshal(rec.Body.Bytes(), &d); rec.Code != http.StatusOK || err != nil {
				t.Fatalf("GET: %d %s", rec.Code, rec.Body)
			}
			if got := len(d.Warnings) == 1 && strings.Contains(d.Warnings[0], "past the warning at"); got != tt.warned || len(d.Warnings) > 1 {
				t.Fatalf("with %d events and the warning at %d: warnings %q", n, tt.warning, d.Warnings)
			}
		})
	}
}

// TestShouldContinueAsNew runs the history guest's Loop, which calls an
// activity for each of its 7 items and continues as new when
// ctx.ShouldContinueAsNew says so, on a host that warns past 6 events and
// keeps no instance live (every turn replays the execution from its
// start). Each item takes 2 events, so the first execution decides at
// lengths 1, 3, 5 and 7: it continues as new after 3 items. After its
// second turn, at length 3, the host's warning drops to 2: the first
// execution goes on measured against the 6 its start recorded (had the
// replay of that step been told of 2, it would have continued as new where
// the step's first run called the activity, and failed the instance), and
// each later one, started with 2, does one item.
// Each activity's input, the length and size its orchestration was told,
// is compared on every replay, and replaying each execution afterwards
// reproduces it too.
func TestShouldContinueAsNew(t *testing.T) {
	t.Parallel()
	h := newBareHostWith(t, Options{HistoryWarning: 6, NoLiveCache: true, Clock: func() time.Time { return conformanceNow }})
	deployGuest(t, h, "host/testdata/guests/history", nil)
	ctx := context.Background()
	if _, err := h.Start(ctx, "Loop", json.RawMessage(`7`), "loop"); err != nil {
		t.Fatal(err)
	}
	// Two turns: the start calls the activity, and so does the step its
	// result wakes, at length 3.
	for turn := range 2 {
		if !runTurns(t, h, conformanceNow) {
			t.Fatalf("turn %d did not run", turn+1)
		}
		if ran, err := h.RunActivities(ctx, conformanceNow, false); err != nil || ran != 1 {
			t.Fatalf("after turn %d, %d activities ran: %v", turn+1, ran, err)
		}
	}
	h.opts.HistoryWarning = 2
	drive(t, h, conformanceNow, false)
	inst, err := h.Instance(ctx, "loop")
	if err != nil || inst.Status != engine.StatusCompleted || inst.ExecutionID != 5 {
		t.Fatalf("instance: %+v, %v; want Completed in execution 5", inst, err)
	}
	for x, want := range []struct {
		warning int64
		lengths []int
		end     engine.EventKind
	}{
		{6, []int{1, 3, 5}, engine.OrchestrationContinuedAsNew},
		{2, []int{1}, engine.OrchestrationContinuedAsNew},
		{2, []int{1}, engine.OrchestrationContinuedAsNew},
		{2, []int{1}, engine.OrchestrationContinuedAsNew},
		{2, []int{1}, engine.OrchestrationCompleted},
	} {
		execution := int64(x + 1)
		events, err := h.ExecutionHistory(ctx, "loop", execution)
		if err != nil {
			t.Fatal(err)
		}
		if events[0].HistoryWarning != want.warning {
			t.Errorf("execution %d: its OrchestrationStarted records the warning %d, want %d", execution, events[0].HistoryWarning, want.warning)
		}
		if end := events[len(events)-1].Kind; end != want.end {
			t.Errorf("execution %d ends with %s, want %s", execution, end, want.end)
		}
		var lengths []int
		size := 0
		for _, ev := range events {
			if ev.Kind != engine.ActivityScheduled {
				continue
			}
			var note string
			var length, sz int
			if err := json.Unmarshal(ev.Input, &note); err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Sscanf(note, "%d %d", &length, &sz); err != nil {
				t.Fatalf("execution %d: note %q: %v", execution, note, err)
			}
			if sz <= size {
				t.Errorf("execution %d: history size %d after %d", execution, sz, size)
			}
			lengths, size = append(lengths, length), sz
		}
		if !reflect.DeepEqual(lengths, want.lengths) {
			t.Errorf("execution %d: the orchestration was told history lengths %v, want %v", execution, lengths, want.lengths)
		}
		rep, err := h.Replay(ctx, "loop", api.ReplayRequest{Execution: execution})
		if err != nil || !rep.OK() {
			t.Errorf("execution %d replays: %+v, %v", execution, rep, err)
		}
	}
}
