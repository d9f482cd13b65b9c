package host_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

func TestActivityRetryPolicy(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/walkthroughs")
	h.finish(t, h.start(t, "Retrying", `"Work"`), `"worked 5ms"`)

	inst := h.run(t, "Retrying", `"AlwaysFails"`)
	const want = `activity "AlwaysFails" failed: the service is down (after 3 attempts)`
	if inst.Status != engine.StatusFailed || inst.Failure.Message != want {
		t.Fatalf("status %s failure %+v", inst.Status, inst.Failure)
	}
	// Every attempt and every wait is in history; the waits back off from
	// 10ms by 3x, capped at 20ms.
	events := h.history(t, inst.ID)
	wantShape := []string{"OrchestrationStarted(Retrying)", "ActivityScheduled(AlwaysFails)", "ActivityFailed", "TimerCreated", "TimerFired",
		"ActivityScheduled(AlwaysFails)", "ActivityFailed", "TimerCreated", "TimerFired", "ActivityScheduled(AlwaysFails)", "ActivityFailed", "OrchestrationFailed"}
	if got := shape(events); !reflect.DeepEqual(got, wantShape) {
		t.Fatalf("history %v\nwant %v", got, wantShape)
	}
	for i, want := range map[int]time.Duration{3: 10 * time.Millisecond, 7: 20 * time.Millisecond} {
		if d := events[i].FireAt.Sub(events[i-1].Time); d != want {
			t.Errorf("wait after event %d: %s, want %s", events[i-1].ID, d, want)
		}
	}
}
