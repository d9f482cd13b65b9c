package host_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// TestAHungAttemptIsDeliveredAgainAtItsHeartbeatTimeout runs, in the
// module, an activity whose call has a heartbeat timeout of 1s; its first
// attempt hangs after 5 frames, on a host whose activity deadline is an
// hour. The host stops it once it has been silent for 1s, and the next
// attempt resumes after the last frame the first one reported; history
// holds the call once.
func TestAHungAttemptIsDeliveredAgainAtItsHeartbeatTimeout(t *testing.T) {
	t.Parallel()
	logs := &records{}
	h := startHost(t, host.Options{Logger: slog.New(logs), ActivityTimeout: time.Hour})
	h.deploy(t, "host/testdata/guests/heartbeats")
	began := time.Now()
	inst := h.run(t, "Count", `{"frames": 20, "hangAt": 6}`)
	if inst.Status != engine.StatusCompleted || string(inst.Result) != `"20 frames, attempt 2, resumed true after frame 5"` {
		t.Fatalf("status %s result %s failure %+v; want the second attempt to resume after frame 5", inst.Status, inst.Result, inst.Failure)
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Fatalf("it took %s; the heartbeat timeout is 1s and the deadline an hour", took)
	}
	logs.wait(t, "activity attempt sent no heartbeat in time; it is stopped and its task delivered again instance="+inst.ID)
	scheduled := 0
	for _, ev := range h.history(t, inst.ID) {
		if ev.Kind == engine.ActivityScheduled {
			scheduled++
		}
	}
	if scheduled != 1 {
		t.Fatalf("history holds %d ActivityScheduled; want 1", scheduled)
	}
}

// TestACancelledActivityInTheModuleCleansUp cancels, by a lost Select, an
// activity in the module that sends heartbeats: its next heartbeat tells
// it, its context is done, and it reports its cleanup over HTTP within
// the grace period, before the host stops it.
func TestACancelledActivityInTheModuleCleansUp(t *testing.T) {
	t.Parallel()
	reports := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reports <- r.URL.RawQuery
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	h := startHost(t, host.Options{HTTPAllowList: []string{u.Host}, ActivityTimeout: time.Hour, CancelGrace: time.Minute})
	h.deploy(t, "host/testdata/guests/heartbeats")
	input, _ := json.Marshal(srv.URL)
	id := h.start(t, "Abandon", string(input))
	report := func(want string) {
		t.Helper()
		select {
		case got := <-reports:
			if got != want {
				t.Fatalf("the activity reported %q; want %q", got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("the activity did not report %q within a minute", want)
		}
	}
	report("started") // after its first heartbeat
	h.raiseNamed(t, id, "stop")
	if inst := h.wait(t, id); inst.Status != engine.StatusCompleted || string(inst.Result) != `"stopped"` {
		t.Fatalf("status %s result %s; want stopped", inst.Status, inst.Result)
	}
	report("cleaned")
}
