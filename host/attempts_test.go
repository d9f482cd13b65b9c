package host_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// TestRunningActivitiesStop runs an activity that spins forever, on a
// host whose activity deadline is an hour, and ends its instance: it is
// cancelled, or terminated. Each time the host stops the attempt (it logs
// so and the task leaves the queue) long before the deadline.
func TestRunningActivitiesStop(t *testing.T) {
	t.Parallel()
	logs := &records{}
	h := startHost(t, host.Options{Logger: slog.New(logs), ActivityTimeout: time.Hour})
	h.deploy(t, "host/testdata/guests/spin")
	ctx := context.Background()
	tests := []struct {
		name string
		end  func(id string) error
		why  string
		want engine.Status
	}{
		{"cancel", func(id string) error { return h.Cancel(ctx, id, "test") }, "its instance is Canceled", engine.StatusCanceled},
		{"terminate", func(id string) error { return h.Terminate(ctx, id, "test") }, "its instance is Terminated", engine.StatusTerminated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := h.start(t, "Wait", strconv.Quote(tt.name))
			logs.wait(t, "guest: spinning "+tt.name)
			if err := tt.end(id); err != nil {
				t.Fatal(err)
			}
			logs.wait(t, "activity stopped instance="+id+" activity=Spin scheduleId=2 why="+tt.why)
			if inst := h.wait(t, id); inst.Status != tt.want {
				t.Errorf("status %s failure %+v, want %s", inst.Status, inst.Failure, tt.want)
			}
		})
	}
}

// TestCancelledActivityStopsAtOnce runs an activity that spins forever
// against the event "stop" in a select, on a host whose activity deadline
// is an hour: "stop" wins, the orchestration cancels the activity and
// waits for "finish". The host stops the attempt as it commits the
// cancellation, not later when the instance ends. With one orchestration
// worker, the turn that takes "finish" (and ends the instance, which would
// stop the attempt too, saying so) runs only once the turn that cancelled
// has returned; so whatever stopped the attempt first is in its log line
// as soon as the instance has completed.
func TestCancelledActivityStopsAtOnce(t *testing.T) {
	t.Parallel()
	logs := &records{}
	h := startHost(t, host.Options{Logger: slog.New(logs), ActivityTimeout: time.Hour, OrchestrationWorkers: 1})
	h.deploy(t, "host/testdata/guests/spin")
	ctx := context.Background()
	id := h.start(t, "Select", `"select"`)
	logs.wait(t, "guest: spinning select")
	if err := h.Raise(ctx, id, "stop", nil, false); err != nil {
		t.Fatal(err)
	}
	h.until(t, id, "the activity cancelled", has(1, engine.ActivityCancelRequested))
	if err := h.Raise(ctx, id, "finish", nil, false); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, id); inst.Status != engine.StatusCompleted {
		t.Fatalf("status %s failure %+v, want Completed", inst.Status, inst.Failure)
	}
	stopped := "activity stopped instance=" + id + " activity=Spin scheduleId=2 why="
	logs.wait(t, stopped)
	if want := stopped + "the orchestration cancelled it"; !logs.has(want) {
		t.Fatalf("the attempt ran on after the orchestration cancelled it, until something else stopped it; want the log record %q, the log has:\n%s", want, logs)
	}
}

// TestActivityDeadline runs an activity that spins forever on a host whose
// activity deadline is a second: the attempt fails at the deadline, saying
// which deadline and where it is set, and the orchestration sees the
// failure.
func TestActivityDeadline(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{ActivityTimeout: time.Second})
	h.deploy(t, "host/testdata/guests/spin")
	inst := h.run(t, "Wait", `"deadline"`)
	want := `activity "Spin" failed: activity "Spin" timed out: it ran past its 1s deadline for one attempt, which durabox serve --activity-timeout sets (a call sets its own with durabox.WithTimeout)`
	if inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != want {
		t.Errorf("status %s failure %+v\nwant failure %q", inst.Status, inst.Failure, want)
	}
}

// TestActivityCallDeadline runs activities whose call sets its own
// deadline (durabox.WithTimeout), which replaces the host's either way: an
// activity that spins forever with a call deadline of 200ms on a host
// whose deadline is ten minutes fails at 200ms, naming the call's
// deadline; one that sleeps three seconds with a call deadline of ten
// minutes on a host whose deadline is a second completes.
func TestActivityCallDeadline(t *testing.T) {
	t.Parallel()
	t.Run("shorter", func(t *testing.T) {
		h := startHost(t, host.Options{ActivityTimeout: 10 * time.Minute})
		h.deploy(t, "host/testdata/guests/spin")
		inst := h.run(t, "Timed", `200`)
		want := `activity "Spin" failed: activity "Spin" timed out: it ran past its 200ms deadline for one attempt, which its call set with durabox.WithTimeout`
		if inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != want {
			t.Errorf("status %s failure %+v\nwant failure %q", inst.Status, inst.Failure, want)
		}
	})
	t.Run("longer than the lease", func(t *testing.T) {
		// The lease is extended while the attempt runs: it is delivered
		// once, and its result recorded.
		logs := &records{}
		h := startHost(t, host.Options{ActivityTimeout: time.Second, Lease: 600 * time.Millisecond, Logger: slog.New(logs)})
		h.deploy(t, "host/testdata/guests/spin")
		inst := h.run(t, "LongNap", `null`)
		if inst.Status != engine.StatusCompleted || string(inst.Result) != `"slept 3000ms"` {
			t.Errorf("status %s result %s failure %+v; want Completed with \"slept 3000ms\"", inst.Status, inst.Result, inst.Failure)
		}
		for _, bad := range []string{"delivered again", "not recorded", "not extended"} {
			if logs.has(bad) {
				t.Errorf("the host's log says an activity was %s:\n%s", bad, logs)
			}
		}
	})
	t.Run("longer", func(t *testing.T) {
		h := startHost(t, host.Options{ActivityTimeout: time.Second})
		h.deploy(t, "host/testdata/guests/spin")
		inst := h.run(t, "LongNap", `null`)
		if inst.Status != engine.StatusCompleted || string(inst.Result) != `"slept 3000ms"` {
			t.Errorf("status %s result %s failure %+v; want Completed with \"slept 3000ms\"", inst.Status, inst.Result, inst.Failure)
		}
	})
}
