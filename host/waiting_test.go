package host_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/host/server"
)

// servedOnClock runs a host on clock with the guest pkg deployed, served
// over HTTP, and returns it, a client of it and its handler.
func servedOnClock(t *testing.T, clock *frozenClock, pkg string) (*testHost, *client.Client, http.Handler) {
	t.Helper()
	h := startHost(t, host.Options{Clock: clock.now})
	h.deploy(t, pkg)
	handler, err := server.New(h.Host, server.Options{Metrics: h.Metrics()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return h, client.New(srv.URL, nil), handler
}

// awaitDetails asks for the instance id until its details satisfy done,
// and returns them.
func awaitDetails(t *testing.T, c *client.Client, id, what string, done func(api.InstanceDetails) bool) api.InstanceDetails {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := c.Details(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if done(d) {
			return d
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(d, "", "  ")
			t.Fatalf("after a minute, instance %s is not %s:\n%s", id, what, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// listed lists the ids of the instances req selects.
func listed(t *testing.T, c *client.Client, req client.ListRequest) []string {
	t.Helper()
	page, err := c.List(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, i := range page.Instances {
		ids = append(ids, i.ID)
	}
	return ids
}

// TestWaitingOnAStuckActivityAndATimer: GET /v1/instances/{id} shows an
// instance whose activity call keeps failing with the attempt, the last
// error and when the next attempt is due, its timer with its due time,
// and when a turn last changed it; the list selects it by how long it
// has gone without progress and by what it waits on, and the metric
// durabox_instances_stalled counts it once it has gone 15 minutes (the
// default) without, all on the host's clock.
func TestWaitingOnAStuckActivityAndATimer(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := newFrozenClock(t0)
	h, c, handler := servedOnClock(t, clock, retriesGuest)
	id := h.start(t, "Impatient", `null`)

	d := awaitDetails(t, c, id, "waiting on its call's retry", func(d api.InstanceDetails) bool {
		return len(d.Activities) == 1 && d.Activities[0].NextRetry != nil
	})
	a := d.Activities[0]
	if a.Activity != "Flaky" || a.Attempt != 1 || a.Running || a.LastError != "busy on attempt 1" || !a.NextRetry.Equal(t0.Add(time.Hour)) {
		t.Errorf("the activity call: %+v; want Flaky, attempt 1 failed with %q, its next attempt at %s", a, "busy on attempt 1", t0.Add(time.Hour))
	}
	due := t0.Add(30 * time.Minute)
	if want := []engine.Wait{{Kind: engine.WaitTimer, ScheduleID: 3, Since: t0, Due: &due}}; !sameWaits(d.WaitingOn, want) {
		t.Errorf("waiting on %+v; want %+v", d.WaitingOn, want)
	}
	if d.LastProgress == nil || !d.LastProgress.Equal(t0) {
		t.Errorf("last progress %v; want %s, its first turn", d.LastProgress, t0)
	}

	clock.set(t0.Add(20 * time.Minute))
	for _, path := range []string{"/v1/instances/" + id, "/v1/instances?stalledFor=15m&waitingOn=timer,event&waitingOn=activity"} {
		req := httptest.NewRequest("GET", "http://localhost"+path, nil)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		checkAgainstOpenAPI(t, req, rec)
	}
	for _, tt := range []struct {
		name string
		req  client.ListRequest
		want []string
	}{
		{"stalled for 15m", client.ListRequest{StalledFor: 15 * time.Minute}, []string{id}},
		{"stalled for 25m", client.ListRequest{StalledFor: 25 * time.Minute}, nil},
		{"waiting on a timer", client.ListRequest{WaitingOn: []engine.WaitKind{engine.WaitTimer}}, []string{id}},
		{"waiting on an activity", client.ListRequest{WaitingOn: []engine.WaitKind{engine.WaitActivity}}, []string{id}},
		{"waiting on an event", client.ListRequest{WaitingOn: []engine.WaitKind{engine.WaitEvent}}, nil},
	} {
		if got := listed(t, c, tt.req); !slices.Equal(got, tt.want) {
			t.Errorf("%s: listed %v; want %v", tt.name, got, tt.want)
		}
	}
	if n := value(t, scrape(t, handler), "durabox_instances_stalled"); n != 1 {
		t.Errorf("durabox_instances_stalled at t0+20m is %g; want 1", n)
	}
	clock.set(t0.Add(10 * time.Minute))
	if n := value(t, scrape(t, handler), "durabox_instances_stalled"); n != 0 {
		t.Errorf("durabox_instances_stalled at t0+10m is %g; want 0", n)
	}
	if _, err := c.List(context.Background(), client.ListRequest{WaitingOn: []engine.WaitKind{"approval"}}); err == nil ||
		!strings.Contains(err.Error(), `bad input: "approval" is not a kind of wait; an instance waits on [activity timer event update child]`) {
		t.Errorf("a list of the instances waiting on an approval: %v; want it refused, naming the kinds", err)
	}
}

// TestWaitingOnAnEvent: an instance that waits for an event, raced
// against a timer, shows both, and the list selects it by the event.
func TestWaitingOnAnEvent(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h, c, _ := servedOnClock(t, newFrozenClock(t0), "host/testdata/guests/events")
	id := h.start(t, "RaceSleepWait", `"0s"`)
	due := t0.Add(100 * time.Millisecond)
	want := []engine.Wait{{Kind: engine.WaitEvent, ScheduleID: 2, Name: "X", Since: t0}, {Kind: engine.WaitTimer, ScheduleID: 3, Since: t0, Due: &due}}
	d := awaitDetails(t, c, id, "waiting on event X and a timer", func(d api.InstanceDetails) bool { return len(d.WaitingOn) > 0 })
	if !sameWaits(d.WaitingOn, want) {
		t.Errorf("waiting on %+v; want %+v", d.WaitingOn, want)
	}
	if got := listed(t, c, client.ListRequest{WaitingOn: []engine.WaitKind{engine.WaitEvent}}); !slices.Equal(got, []string{id}) {
		t.Errorf("the instances waiting on an event: %v; want %s", got, id)
	}
}

// TestWaitingOnAnUpdate: an orchestration that waits on a condition only
// an update can change waits on an update of no name; once an update's
// handler sleeps, on that update and its timer.
func TestWaitingOnAnUpdate(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h, c, _ := servedOnClock(t, newFrozenClock(t0), "host/testdata/guests/updates")
	id := h.start(t, "Cart", `{}`)
	d := awaitDetails(t, c, id, "waiting on an update", func(d api.InstanceDetails) bool { return len(d.WaitingOn) > 0 })
	if want := []engine.Wait{{Kind: engine.WaitUpdate}}; !sameWaits(d.WaitingOn, want) {
		t.Errorf("waiting on %+v; want %+v", d.WaitingOn, want)
	}
	if _, err := h.Update(context.Background(), id, api.UpdateRequest{Name: "Slow", ID: "s1"}, 0); err != nil {
		t.Fatal(err)
	}
	d = awaitDetails(t, c, id, "waiting on update s1", func(d api.InstanceDetails) bool {
		return slices.ContainsFunc(d.WaitingOn, func(w engine.Wait) bool { return w.ID == "s1" })
	})
	due := t0.Add(time.Hour)
	want := []engine.Wait{{Kind: engine.WaitTimer, ScheduleID: 3, Since: t0, Due: &due}, {Kind: engine.WaitUpdate, Name: "Slow", ID: "s1", Since: t0}}
	if !sameWaits(d.WaitingOn, want) {
		t.Errorf("waiting on %+v; want %+v", d.WaitingOn, want)
	}
}

// sameWaits reports whether got and want are the same waits, their times
// compared as instants.
func sameWaits(got, want []engine.Wait) bool {
	norm := func(ws []engine.Wait) []engine.Wait {
		out := slices.Clone(ws)
		for i := range out {
			out[i].Since = out[i].Since.UTC()
			if out[i].Due != nil {
				d := out[i].Due.UTC()
				out[i].Due = &d
			}
		}
		return out
	}
	return reflect.DeepEqual(norm(got), norm(want))
}
