package storetest

import (
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// testCompleteFromOutside: an attempt that waits to be completed from
// outside lets its task go, leased by nobody and not delivered before its
// deadline; a completion with the secret before the deadline records the
// result as a message, once; a second one, one with another secret and
// one after the deadline are refused as ErrLeaseLost, saying why; a task
// whose wait ran out is delivered again, Unanswered.
func testCompleteFromOutside(f *fixture) {
	f.create("i1")
	f.run("i1", t0, started("i1", input("i1")), scheduled("Approve"), scheduled("Sign"))
	approve, sign := f.lease(t0), f.lease(t0)
	if approve.Unanswered || sign.Unanswered {
		f.t.Fatalf("first deliveries are Unanswered: %+v, %+v", approve, sign)
	}
	deadline := t0.Add(time.Hour)
	f.must(f.s.AwaitCompletion(f.ctx, approve, "s3cret", deadline), "AwaitCompletion")
	f.must(f.s.AwaitCompletion(f.ctx, sign, "other", deadline), "AwaitCompletion")
	f.wantErr(f.s.AwaitCompletion(f.ctx, approve, "s3cret", deadline), store.ErrLeaseLost, "AwaitCompletion of a task let go")
	f.noActivity(deadline.Add(-time.Second))
	refused := func(what string, id int64, secret string, now time.Time, why string) {
		f.t.Helper()
		err := f.s.CompleteFromOutside(f.ctx, id, secret, activityCompleted(0, `"late"`), now)
		f.wantErr(err, store.ErrLeaseLost, what)
		if !strings.Contains(err.Error(), why) {
			f.t.Fatalf("%s: %v; want it to say %q", what, err, why)
		}
	}
	refused("a completion with another secret", approve.ID, "guess", t0.Add(time.Minute), "does not wait for this token")
	f.must(f.s.CompleteFromOutside(f.ctx, approve.ID, "s3cret", engine.Event{Kind: engine.ActivityCompleted, Result: []byte(`"approved"`)}, t0.Add(time.Minute)), "CompleteFromOutside")
	refused("a second completion", approve.ID, "s3cret", t0.Add(2*time.Minute), "no such task waits")
	refused("a completion past the deadline", sign.ID, "other", deadline.Add(time.Second), "deadline passed")
	item := f.lock(t0.Add(2 * time.Minute))
	if len(item.Messages) != 1 || item.Messages[0].Event.Kind != engine.ActivityCompleted || item.Messages[0].Event.ScheduleID != approve.Task.ScheduleID ||
		string(item.Messages[0].Event.Result) != `"approved"` {
		f.t.Fatalf("messages %+v; want Approve's result from outside, naming its schedule", item.Messages)
	}
	again := f.lease(deadline.Add(time.Second))
	if again.ID != sign.ID || !again.Unanswered {
		f.t.Fatalf("delivery after the deadline %+v; want Sign, Unanswered", again)
	}
}
