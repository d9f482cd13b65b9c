package host

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// TestTracingOffAllocatesNothing: with no Options.TraceExporter, every
// hook of tracing.go on the paths of a turn, an activity attempt, a
// worker's lease and completion, an update, a query and a schedule
// firing returns at once, allocating nothing (counted by
// testing.AllocsPerRun). Not parallel: AllocsPerRun counts the
// allocations of the whole process, and refuses a parallel test.
func TestTracingOffAllocatesNothing(t *testing.T) {
	var tr *tracing // what New makes of a nil TraceExporter
	if newTracing(nil, time.Now) != nil {
		t.Fatal("newTracing(nil) is not nil")
	}
	ctx := context.Background()
	item := &store.WorkItem{Instance: store.Instance{ID: "i", Name: "Order", ExecutionID: 1}}
	w := &store.ActivityWork{InstanceID: "i", Task: engine.ActivityTask{Name: "Charge"}}
	r := &ran{res: &engine.TurnResult{Status: engine.StatusCompleted}}
	tok := taskToken{Span: "0123456789abcdef", InstanceID: "i"}
	result := engine.Event{Kind: engine.ActivityCompleted}
	sc, f, run := store.Schedule{Name: "s"}, store.ScheduleFire{Run: &store.ScheduleRun{InstanceID: "i"}}, store.ScheduleRun{InstanceID: "i"}
	u, errQuery := store.Update{Name: "approve"}, errors.New("no")
	allocs := testing.AllocsPerRun(100, func() {
		sp := tr.turn(ctx, item)
		tr.turnEnded(sp, r)
		tr.ended(ctx, item.Instance, engine.StatusCompleted, nil)
		actx, sp := tr.activity(ctx, w)
		tr.activityEnded(sp, result)
		if span, traceparent := tr.leased(w); span != "" || traceparent != "" || actx != ctx {
			t.Fatal("tracing off made a span")
		}
		tr.workerEnded(ctx, tok, result)
		tr.updateEnded(tr.update(ctx, "i", u), u, nil)
		tr.queryEnded(tr.query(ctx, "i", "status"), errQuery)
		tr.fired(ctx, sc, f, run)
		if err := tr.close(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("tracing off allocated %v times a round; want none", allocs)
	}
}
