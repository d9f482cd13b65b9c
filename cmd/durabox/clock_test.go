package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/pgtest"
)

// TestSkewedHostsKeepTheDatabaseClock: two hosts share a PostgreSQL
// database, and one's clock runs 90 seconds ahead ($DURABOX_CLOCK_SKEW).
// Each keeps its leases and timers on the database server's clock: the
// skewed host neither takes the other's leased activities as expired (no
// activity is delivered twice) nor fires the other's timers early (every
// Retry takes at least its two activities and its timer), and it says
// that its clock is off.
func TestSkewedHostsKeepTheDatabaseClock(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	dir := t.TempDir()
	a := startServerAt(t, url, "127.0.0.1:0", "--host-id", "a", "--lease", "2s", "--cache-dir", filepath.Join(dir, "a"))
	ahead := startServerEnv(t, []string{envClockSkew + "=90s"}, url, "127.0.0.1:0", "--host-id", "ahead", "--lease", "2s", "--cache-dir", filepath.Join(dir, "ahead"))
	deployExample(t, a.client(), "retry")
	// Each Retry runs FlakyTask for 1.5s (it fails), waits 2s on a timer,
	// and runs it again for 1.5s: at least 5s, whichever host runs what.
	const least = 5 * time.Second
	ctx := context.Background()
	began := map[string]time.Time{}
	for i := range 6 {
		on := []*serveProcess{a, ahead}[i%2]
		id, err := on.client().Start(ctx, api.StartRequest{Name: "Retry", Input: json.RawMessage(`{"failures": 1, "delay": "2s", "workMillis": 1500}`)})
		if err != nil {
			t.Fatal(err)
		}
		began[id] = time.Now()
	}
	for id, at := range began {
		events := waitFor(t, a.client(), id, "its end", func(e []engine.Event) bool {
			return len(e) > 0 && e[len(e)-1].Kind == engine.OrchestrationCompleted
		})
		if took := time.Since(at); took < least {
			t.Errorf("%s finished %s after its start; its activities and timer take at least %s: a timer fired early", id, took.Round(time.Millisecond), least)
		}
		checkHistory(t, events)
	}
	for name, h := range map[string]*serveProcess{"a": a, "ahead": ahead} {
		if out := h.output(); strings.Contains(out, "activity delivered again") {
			t.Errorf("host %s delivered an activity again, with both hosts up: a lease was taken as ended early\n%s", name, out)
		}
	}
	// The offset is measured: 1m30s to within the round trip's half.
	if out := ahead.output(); !regexp.MustCompile(`this host's clock is 1m(29\.9|30)`).MatchString(out) || !strings.Contains(out, "ahead of the database server's") {
		t.Errorf("the host 90s ahead did not say its clock is off:\n%s", out)
	}
}
