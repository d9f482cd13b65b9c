package engine

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func cancelTimer(target uint64) abi.Command {
	return abi.Command{Kind: abi.CommandCancelTimer, Target: target}
}

func cancelActivity(target uint64) abi.Command {
	return abi.Command{Kind: abi.CommandCancelActivity, Target: target}
}

// selectTimeout races activity Slow (command 1) against a 5s timer (command
// 2), as a select does. If the activity wins it cancels the timer and calls
// Next (command 4); if the timer wins it cancels the activity and completes
// with "timeout".
func selectTimeout(g *fakeGuest, j abi.Job) []abi.Command {
	switch {
	case j.Kind == abi.JobStart:
		return []abi.Command{activity("Slow", "null"), timer(5 * time.Second)}
	case j.Kind == abi.JobResolveActivity && j.Seq == 1:
		return []abi.Command{cancelTimer(2), activity("Next", string(j.Result))}
	case j.Kind == abi.JobFireTimer:
		return []abi.Command{cancelActivity(1), complete(`"timeout"`)}
	case j.Kind == abi.JobResolveActivity && j.Seq == 4:
		return []abi.Command{complete(string(j.Result))}
	}
	return nil
}

func TestSelectActivityWinsThenMoreWork(t *testing.T) {
	t.Parallel()
	steps := []step{
		{at(0), []Event{started(`null`)}},
		{at(1), []Event{activityDone(2, `"fast"`)}},
		// The losing timer fires late: it must not disturb anything.
		{at(5), []Event{timerFired(3, 5)}},
		{at(6), []Event{activityDone(6, `"done"`)}},
	}
	for _, live := range []bool{true, false} {
		history, results := drive(t, selectTimeout, live, steps)
		want := []EventKind{OrchestrationStarted, ActivityScheduled, TimerCreated, ActivityCompleted, TimerCancelled, ActivityScheduled, ActivityCompleted, OrchestrationCompleted}
		if got := kinds(history); !reflect.DeepEqual(got, want) {
			t.Fatalf("live=%v history %v", live, got)
		}
		if history[4].ScheduleID != 3 || history[5].Name != "Next" || string(history[5].Input) != `"fast"` {
			t.Fatalf("live=%v: %+v", live, history[4:6])
		}
		if d := results[2].Dropped; len(d) != 1 || d[0].Reason != "event 3 was cancelled" {
			t.Fatalf("live=%v: the late timer: %+v", live, d)
		}
		if last := results[3]; last.Status != StatusCompleted || string(last.Result) != `"done"` {
			t.Fatalf("live=%v: %s %s", live, last.Status, last.Result)
		}
	}
}

func TestSelectTimerWinsAndTheLateResultIsDropped(t *testing.T) {
	t.Parallel()
	history, results := drive(t, selectTimeout, true, []step{
		{at(0), []Event{started(`null`)}},
		{at(5), []Event{timerFired(3, 5)}},
	})
	want := []EventKind{OrchestrationStarted, ActivityScheduled, TimerCreated, TimerFired, ActivityCancelRequested, OrchestrationCompleted}
	if got := kinds(history); !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v", got)
	}
	if history[4].ScheduleID != 2 || results[1].Status != StatusCompleted {
		t.Fatalf("cancel names event %d; status %s", history[4].ScheduleID, results[1].Status)
	}
	// A fresh execution replaying that history drops the activity's late
	// result (and the instance is finished anyway).
	res, err := newExecution(newGuest(selectTimeout)).Turn(TurnInput{History: history, Messages: []Event{activityDone(2, `"late"`)}, Now: at(9)})
	if err != nil || res.Err != nil || len(res.NewEvents) != 0 || len(res.Dropped) != 1 {
		t.Fatalf("replay: %v %v %+v", err, res.Err, res)
	}
}

func TestCancelNondeterminism(t *testing.T) {
	t.Parallel()
	// History says the timer was cancelled when Slow won; this version of
	// the code cancels the activity Other instead.
	history := hist(started(`null`), scheduled("Slow", "null"), Event{Kind: TimerCreated, FireAt: fireAt(5)}, scheduled("Other", "null"),
		activityDone(2, `"fast"`), Event{Kind: TimerCancelled, ScheduleID: 3})
	g := newGuest(func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return []abi.Command{activity("Slow", "null"), timer(5 * time.Second), activity("Other", "null")}
		}
		return []abi.Command{cancelActivity(3)}
	})
	res, err := newExecution(g).Turn(TurnInput{History: history, Now: at(9)})
	if err != nil {
		t.Fatal(err)
	}
	const want = "nondeterminism at event 6: history has TimerCancelled(event 3), the orchestration emitted CancelActivity(command 3)"
	var nd *NondeterminismError
	if !errors.As(res.Err, &nd) || nd.Code != ChangedCommand || res.Err.Error() != want {
		t.Fatalf("err = %v\nwant %s", res.Err, want)
	}
}

func TestCancellingWhatIsNotOpenIsAGuestBug(t *testing.T) {
	t.Parallel()
	g := newGuest(func(_ *fakeGuest, j abi.Job) []abi.Command {
		return []abi.Command{cancelTimer(7)}
	})
	res, err := newExecution(g).Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	const want = "engine: the guest emitted CancelTimer(command 7), but command 7 is not an open TimerCreated (a guest SDK bug)"
	if res.Err == nil || res.Err.Error() != want || res.Status != StatusFailed {
		t.Fatalf("err = %v, status %s", res.Err, res.Status)
	}
}
