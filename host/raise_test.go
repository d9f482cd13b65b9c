package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
)

func signalsHost(t *testing.T) *testHost {
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/signals")
	return h
}

// startAt starts the orchestration name with input as instance id.
func (h *testHost) startAt(t *testing.T, name, input, id string) {
	t.Helper()
	if _, err := h.Start(context.Background(), name, json.RawMessage(input), id); err != nil {
		t.Fatal(err)
	}
}

// TestRaiseBetweenInstances: an orchestration raises an event at a
// running instance, at one that does not exist and at one that has
// finished. The running one gets the event once, in its history; the
// sender's history records each outcome, and it goes on past the two
// that were not delivered.
func TestRaiseBetweenInstances(t *testing.T) {
	t.Parallel()
	h := signalsHost(t)
	ctx := context.Background()
	h.startAt(t, "Listen", `null`, "listener")
	h.startAt(t, "Listen", `null`, "done")
	if err := h.Raise(ctx, "done", "Ping", json.RawMessage(`"early"`), true); err != nil {
		t.Fatal(err)
	}
	h.finish(t, "done", `"early"`)
	h.startAt(t, "Notify", `["listener","nobody","done"]`, "sender")
	const nobody = `event \"Ping\" was not delivered to instance \"nobody\": no such instance exists`
	const finished = `event \"Ping\" was not delivered to instance \"done\": instance finished: it is Completed`
	events := h.finish(t, "sender", `["delivered","`+nobody+`","`+finished+`"]`)
	want := []string{"OrchestrationStarted(Notify)", "ExternalEventSent(Ping)", "ExternalEventSent(Ping)", "ExternalEventSent(Ping)",
		"ExternalEventDelivered", "ExternalEventNotDelivered", "ExternalEventNotDelivered", "OrchestrationCompleted"}
	if got := shape(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("sender's history %v\nwant %v", got, want)
	}
	if targets := []string{events[1].InstanceID, events[2].InstanceID, events[3].InstanceID}; !reflect.DeepEqual(targets, []string{"listener", "nobody", "done"}) {
		t.Fatalf("events sent to %q", targets)
	}
	listened := h.finish(t, "listener", `"hi listener"`)
	if n := count(listened, engine.ExternalEventPersistent); n != 1 {
		t.Fatalf("the listener's history has %d events, want 1: %v", n, shape(listened))
	}
	if n := count(h.history(t, "done"), engine.ExternalEventPersistent); n != 1 {
		t.Fatalf("the finished instance's history has %d events, want its 1", n)
	}
}

// TestRaiseBackAndForth: two instances send each other persistent events
// in turn, each waiting for the other's before it sends the next; every
// event arrives once.
func TestRaiseBackAndForth(t *testing.T) {
	t.Parallel()
	h := signalsHost(t)
	// The one served to first, so that the first ball has somewhere to go.
	h.startAt(t, "Rally", `{"Peer":"left","Balls":5}`, "right")
	h.startAt(t, "Rally", `{"Peer":"right","Serves":true,"Balls":5}`, "left")
	for _, id := range []string{"left", "right"} {
		events := h.finish(t, id, `5`)
		if sent, got := count(events, engine.ExternalEventDelivered), count(events, engine.ExternalEventPersistent); sent != 5 || got != 5 {
			t.Fatalf("%s sent %d and received %d events, want 5 and 5: %v", id, sent, got, shape(events))
		}
	}
}

// TestStartWithEvent: signal with start starts a new instance with the
// event after its start, and, for an instance that exists, only raises
// the event at it; one that has finished refuses it.
func TestStartWithEvent(t *testing.T) {
	t.Parallel()
	h := signalsHost(t)
	ctx := context.Background()
	ping := func(data string) api.RaiseRequest {
		return api.RaiseRequest{Name: "Ping", Data: json.RawMessage(data), Persistent: true}
	}
	started, err := h.StartWithEvent(ctx, "", "Listen", nil, "fresh", ping(`"first"`))
	if err != nil || !started {
		t.Fatalf("StartWithEvent of a new instance: %v, %v; want it started", started, err)
	}
	events := h.finish(t, "fresh", `"first"`)
	if got, want := shape(events), []string{"OrchestrationStarted(Listen)", "ExternalSubscribedPersistent(Ping)", "ExternalEventPersistent(Ping)", "OrchestrationCompleted"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v\nwant %v", got, want)
	}

	h.startAt(t, "Listen", `null`, "listener")
	started, err = h.StartWithEvent(ctx, "", "Listen", nil, "listener", ping(`"second"`))
	if err != nil || started {
		t.Fatalf("StartWithEvent of a running instance: %v, %v; want only the event", started, err)
	}
	listened := h.finish(t, "listener", `"second"`)
	if n := count(listened, engine.OrchestrationStarted); n != 1 {
		t.Fatalf("%d starts in the listener's history; want 1", n)
	}
	if _, err := h.StartWithEvent(ctx, "", "Listen", nil, "listener", ping(`"third"`)); !errors.Is(err, api.ErrFinished) {
		t.Fatalf("StartWithEvent of a finished instance: %v; want ErrFinished", err)
	}
	if _, err := h.StartWithEvent(ctx, "", "Listen", nil, "", ping(`"fourth"`)); !errors.Is(err, api.ErrBadInput) {
		t.Fatalf("StartWithEvent without an id: %v; want ErrBadInput", err)
	}
}
