package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/pgtest"
)

// TestRaiseBetweenHostsOnPostgres: two instances, started through two
// hosts on one PostgreSQL database, send each other persistent events in
// turn, each waiting for the other's before it sends the next, with the
// turns taken by whichever host is free. Every event arrives once: each
// history has five sent, five delivered and five received, with no gap
// and no duplicate.
func TestRaiseBetweenHostsOnPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	dir := t.TempDir()
	a := startServerAt(t, url, "127.0.0.1:0", "--host-id", "a", "--cache-dir", filepath.Join(dir, "a"))
	b := startServerAt(t, url, "127.0.0.1:0", "--host-id", "b", "--cache-dir", filepath.Join(dir, "b"))
	wasm, err := guestbuild.Wasm("host/testdata/guests/signals")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := a.client().Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		on        *serveProcess
		id, input string
	}{
		// The one served to first: a ball raised at an instance that is
		// not there yet fails the rally.
		{b, "right", `{"Peer":"left","Balls":5}`},
		{a, "left", `{"Peer":"right","Serves":true,"Balls":5}`},
	} {
		if _, err := s.on.client().Start(ctx, api.StartRequest{Name: "Rally", ID: s.id, Input: json.RawMessage(s.input)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"left", "right"} {
		events := waitFor(t, b.client(), id, "its end", func(e []engine.Event) bool {
			return len(e) > 0 && e[len(e)-1].IsTerminal()
		})
		checkHistory(t, events)
		last := events[len(events)-1]
		if last.Kind != engine.OrchestrationCompleted || string(last.Result) != "5" {
			t.Fatalf("%s ended %s", id, last.String())
		}
		sent := map[engine.EventKind]int{}
		for _, ev := range events {
			sent[ev.Kind]++
		}
		if sent[engine.ExternalEventSent] != 5 || sent[engine.ExternalEventDelivered] != 5 || sent[engine.ExternalEventPersistent] != 5 {
			t.Fatalf("%s sent %d, had %d delivered and received %d events; want 5 each: %s", id,
				sent[engine.ExternalEventSent], sent[engine.ExternalEventDelivered], sent[engine.ExternalEventPersistent], kindsOf(events))
		}
	}
}
