package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

func raised(name, data string) Event {
	return Event{Kind: ExternalEvent, Name: name, Result: json.RawMessage(data)}
}

func raisedPersistent(name, data string) Event {
	return Event{Kind: ExternalEventPersistent, Name: name, Result: json.RawMessage(data)}
}

func wait(name string) abi.Command { return abi.Command{Kind: abi.CommandWaitEvent, Name: name} }

func waitPersistent(name string) abi.Command {
	return abi.Command{Kind: abi.CommandWaitEventPersistent, Name: name}
}

// raceThenWait races a wait for X (command 1) against a timer (command 2);
// the timer wins, the wait is cancelled (command 3), then it waits for X
// again (command 4, 5 for the persistent variant) and completes with what it
// gets.
func raceThenWait(persistent bool) func(*fakeGuest, abi.Job) []abi.Command {
	w := wait
	if persistent {
		w = waitPersistent
	}
	return func(_ *fakeGuest, j abi.Job) []abi.Command {
		switch j.Kind {
		case abi.JobStart:
			return []abi.Command{w("X"), timer(time.Second)}
		case abi.JobFireTimer:
			return []abi.Command{{Kind: abi.CommandCancelWait, Target: 1}, w("X")}
		case abi.JobResolveEvent:
			return []abi.Command{complete(string(j.Result))}
		}
		return nil
	}
}

// firstOfTwoMailboxes waits for go (command 1), then selects between
// persistent waits for A and B (commands 2 and 3): the first to resolve
// wins, the other's wait is cancelled (command 4), and a new wait takes
// its event (command 5); it completes with the winner's command and what
// the new wait got.
func firstOfTwoMailboxes(g *fakeGuest, j abi.Job) []abi.Command {
	if j.Kind == abi.JobStart {
		return []abi.Command{wait("go")}
	}
	g.state["resolved"]++
	switch g.state["resolved"] {
	case 1:
		return []abi.Command{waitPersistent("A"), waitPersistent("B")}
	case 2:
		g.state["won"] = int(j.Seq)
		if j.Seq == 2 {
			return []abi.Command{{Kind: abi.CommandCancelWait, Target: 3}, waitPersistent("B")}
		}
		return []abi.Command{{Kind: abi.CommandCancelWait, Target: 2}, waitPersistent("A")}
	}
	return []abi.Command{complete(fmt.Sprintf(`[%d,%s]`, g.state["won"], j.Result))}
}

func TestEventLanes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		handle      func(*fakeGuest, abi.Job) []abi.Command
		steps       []step
		wantResult  string
		wantDropped []string
	}{
		{
			name: "positional: an event raised while its wait is cancelled is dropped", handle: raceThenWait(false),
			steps: []step{
				{at(0), []Event{started(`null`)}},
				{at(1), []Event{timerFired(3, 1)}},
				{at(2), []Event{raised("X", `"fresh"`)}},
			},
			wantResult: `"fresh"`,
		},
		{
			name: "positional: an event raised before any wait is dropped",
			handle: func(_ *fakeGuest, j abi.Job) []abi.Command {
				if j.Kind == abi.JobStart {
					return []abi.Command{timer(time.Second)}
				}
				if j.Kind == abi.JobFireTimer {
					return []abi.Command{wait("X")}
				}
				return []abi.Command{complete(string(j.Result))}
			},
			steps: []step{
				{at(0), []Event{started(`null`), raised("X", `"early"`)}},
				{at(1), []Event{timerFired(2, 1)}},
				{at(2), []Event{raised("X", `"on time"`)}},
			},
			wantResult:  `"on time"`,
			wantDropped: []string{`no wait for event "X" is active: an event raised before its wait, or while its wait was cancelled, is dropped`},
		},
		{
			name: "persistent: delivered to the active wait", handle: raceThenWait(true),
			steps: []step{
				{at(0), []Event{started(`null`)}},
				{at(1), []Event{raisedPersistent("X", `"direct"`)}},
			},
			wantResult: `"direct"`,
		},
		{
			name: "persistent: survives the cancelled wait and is taken by the next", handle: raceThenWait(true),
			steps: []step{
				{at(0), []Event{started(`null`)}},
				{at(1), []Event{timerFired(3, 1), raisedPersistent("X", `"kept"`)}},
			},
			wantResult: `"kept"`,
		},
		{
			name: "persistent: of two waits whose events wait, a select takes the first; the other's event is kept", handle: firstOfTwoMailboxes,
			steps: []step{
				{at(0), []Event{started(`null`)}},
				{at(1), []Event{raisedPersistent("A", `"a"`), raisedPersistent("B", `"b"`), raised("go", `null`)}},
			},
			wantResult: `[2,"b"]`,
		},
		{
			name: "persistent: a wait cancelled in the step that made it takes no event",
			handle: func(g *fakeGuest, j abi.Job) []abi.Command {
				switch j.Kind {
				case abi.JobStart:
					return []abi.Command{timer(time.Second)}
				case abi.JobFireTimer:
					if g.state["fired"]++; g.state["fired"] == 1 {
						return []abi.Command{waitPersistent("X"), {Kind: abi.CommandCancelWait, Target: 2}, timer(time.Second)}
					}
					return []abi.Command{waitPersistent("X")}
				}
				return []abi.Command{complete(string(j.Result))}
			},
			steps: []step{
				{at(0), []Event{started(`null`), raisedPersistent("X", `"kept"`)}},
				{at(1), []Event{timerFired(2, 1)}},
				{at(2), []Event{timerFired(7, 2)}},
			},
			wantResult: `"kept"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, results := drive(t, tt.handle, true, tt.steps)
			replayed, _ := drive(t, tt.handle, false, tt.steps)
			if !reflect.DeepEqual(live, replayed) {
				t.Fatalf("live and replayed histories differ:\n%v\n%v", kinds(live), kinds(replayed))
			}
			last := results[len(results)-1]
			if string(last.Result) != tt.wantResult {
				t.Errorf("result %s, want %s (history %v)", last.Result, tt.wantResult, kinds(live))
			}
			var dropped []string
			for _, r := range results {
				for _, d := range r.Dropped {
					dropped = append(dropped, d.Reason)
				}
			}
			if !reflect.DeepEqual(dropped, tt.wantDropped) {
				t.Errorf("dropped %q, want %q", dropped, tt.wantDropped)
			}
		})
	}
}

func TestPersistentEventsAreFIFOAndLimited(t *testing.T) {
	t.Parallel()
	// Waits for X twice, in sequence, then completes with both.
	var got []string
	handle := func(_ *fakeGuest, j abi.Job) []abi.Command {
		switch j.Kind {
		case abi.JobStart:
			return []abi.Command{timer(time.Second)}
		case abi.JobFireTimer:
			return []abi.Command{waitPersistent("X")}
		case abi.JobResolveEvent:
			got = append(got, string(j.Result))
			if len(got) == 2 {
				return []abi.Command{complete(`"done"`)}
			}
			return []abi.Command{waitPersistent("X")}
		}
		return nil
	}
	var many []Event
	for i := range MaxPersistentEvents + 1 {
		many = append(many, raisedPersistent("X", fmt.Sprintf(`"%d"`, i)))
	}
	_, results := drive(t, handle, true, []step{{at(0), append([]Event{started(`null`)}, many...)}, {at(1), []Event{timerFired(2, 1)}}})
	if !reflect.DeepEqual(got, []string{`"0"`, `"1"`}) {
		t.Fatalf("waits got %v, want the first two events in order", got)
	}
	if d := results[0].Dropped; len(d) != 1 || d[0].Reason != `the execution already took 20 persistent events, the limit; persistent event "X" is dropped` {
		t.Fatalf("dropped %+v", d)
	}
}

func TestContinueAsNewCarriesUntakenPersistentEvents(t *testing.T) {
	t.Parallel()
	handle := func(_ *fakeGuest, j abi.Job) []abi.Command {
		switch j.Kind {
		case abi.JobStart:
			return []abi.Command{timer(time.Second)}
		case abi.JobFireTimer:
			return []abi.Command{{Kind: abi.CommandContinueAsNew, Output: []byte(`{"round":2}`)}}
		}
		return nil
	}
	history, results := drive(t, handle, true, []step{
		{at(0), []Event{started(`{"round":1}`), raisedPersistent("X", `"a"`)}},
		{at(1), []Event{timerFired(2, 1), raisedPersistent("X", `"b"`), raised("Y", `"gone"`)}},
	})
	if got := kinds(history); !reflect.DeepEqual(got, []EventKind{OrchestrationStarted, TimerCreated, ExternalEventPersistent, TimerFired, OrchestrationContinuedAsNew}) {
		t.Fatalf("history %v", got)
	}
	last := results[1]
	want := &ContinueAsNew{Input: json.RawMessage(`{"round":2}`), Started: started(`{"round":2}`), Carried: []Event{raisedPersistent("X", `"a"`), raisedPersistent("X", `"b"`)}}
	if last.Status != StatusContinuedAsNew || !reflect.DeepEqual(last.ContinueAsNew, want) {
		t.Fatalf("status %s, continue as new %+v", last.Status, last.ContinueAsNew)
	}
	if len(last.Dropped) != 1 || last.Dropped[0].Reason != "the execution continued as new" {
		t.Fatalf("dropped %+v", last.Dropped)
	}
}

// TestRaisedEventTakesTheOldestWait opens two waits for X in one step, so
// that both are active together, and raises X twice: the first
// event goes to the oldest wait (command 1, event 2), the second to the
// other, whether they arrive in two turns or in one, live and replayed.
func TestRaisedEventTakesTheOldestWait(t *testing.T) {
	t.Parallel()
	// Waits for X twice at once; completes with what each wait got,
	// once both have.
	handle := func(g *fakeGuest, j abi.Job) []abi.Command {
		switch j.Kind {
		case abi.JobStart:
			return []abi.Command{wait("X"), wait("X")}
		case abi.JobResolveEvent:
			var n int
			if err := json.Unmarshal(j.Result, &n); err != nil {
				return []abi.Command{fail(err.Error())}
			}
			g.state[fmt.Sprint(j.Seq)] = n
			if len(g.state) == 2 {
				return []abi.Command{complete(fmt.Sprintf(`{"wait 1":%d,"wait 2":%d}`, g.state["1"], g.state["2"]))}
			}
		}
		return nil
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"two turns", []step{{at(0), []Event{started(`null`)}}, {at(1), []Event{raised("X", `1`)}}, {at(2), []Event{raised("X", `2`)}}}},
		{"one turn", []step{{at(0), []Event{started(`null`)}}, {at(1), []Event{raised("X", `1`), raised("X", `2`)}}}},
	} {
		for _, live := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, live %v", tt.name, live), func(t *testing.T) {
				history, results := drive(t, handle, live, tt.steps)
				var bound []int64
				for _, ev := range history {
					if ev.Kind == ExternalEvent {
						bound = append(bound, ev.ScheduleID)
					}
				}
				if !reflect.DeepEqual(bound, []int64{2, 3}) {
					t.Errorf("the two events are bound to the waits of events %v, want [2 3]: the first raised to the oldest wait", bound)
				}
				last := results[len(results)-1]
				if want := `{"wait 1":1,"wait 2":2}`; last.Status != StatusCompleted || string(last.Result) != want {
					t.Errorf("status %s, result %s; want %s: the first event raised goes to the first wait", last.Status, last.Result, want)
				}
			})
		}
	}
}

// TestPersistentEventLimitIsTheCallers: TurnInput.MaxPersistentEvents sets
// how many persistent events an execution takes.
func TestPersistentEventLimitIsTheCallers(t *testing.T) {
	t.Parallel()
	x := newExecution(newGuest(func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return []abi.Command{waitPersistent("Never")}
		}
		return nil
	}))
	res, err := x.Turn(TurnInput{Now: at(0), MaxPersistentEvents: 2,
		Messages: []Event{started(`null`), raisedPersistent("X", `1`), raisedPersistent("X", `2`), raisedPersistent("X", `3`)}})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	if len(res.Dropped) != 1 || res.Dropped[0].Reason != `the execution already took 2 persistent events, the limit; persistent event "X" is dropped` {
		t.Fatalf("dropped %+v; want the third", res.Dropped)
	}
}

// TestBindingAnEventCostsTheSameAfterManyEvents: an execution that has
// taken 1,000 events, each for a wait of its own, binds the next one after
// looking at no more waits than it did for the first: it keeps only the
// waits not yet matched (issue 35: each event looked at every wait the
// execution ever made, and 100,000 events raised at one instance cost
// twice as much each as 1,000). Counted in the waits it keeps, which are
// those it looks at.
func TestBindingAnEventCostsTheSameAfterManyEvents(t *testing.T) {
	t.Parallel()
	const n = 1000
	waitAgain := func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart || j.Kind == abi.JobResolveEvent {
			return []abi.Command{wait("E"), wait("Other")}
		}
		return nil
	}
	x := newExecution(newGuest(waitAgain))
	var history []Event
	for i := range n + 1 {
		msg := raised("E", fmt.Sprint(i))
		if i == 0 {
			msg = started(`null`)
		}
		res, err := x.Turn(TurnInput{History: history, Messages: []Event{msg}, Now: at(i)})
		if err != nil || res.Err != nil || len(res.Dropped) > 0 {
			t.Fatalf("turn %d: %v, %v, dropped %v", i, err, res.Err, res.Dropped)
		}
		history = append(history, res.NewEvents...)
		if kept := len(x.waits["E"]); kept > 2 {
			t.Fatalf("after %d events the execution keeps %d waits for E, which binding the next one looks at; want at most 2 (the one open, and the one just matched)", i, kept)
		}
	}
}
