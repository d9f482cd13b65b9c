package engine

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// hist numbers events from 1 and stamps event n at second n-1.
func hist(events ...Event) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		e.ID, e.Time = int64(i+1), at(i)
		out[i] = e
	}
	return out
}

func scheduled(name, input string) Event {
	return Event{Kind: ActivityScheduled, Name: name, Input: json.RawMessage(input)}
}

func kinds(events []Event) []EventKind {
	var out []EventKind
	for _, e := range events {
		out = append(out, e.Kind)
	}
	return out
}

// step is one turn of a simulated host: the messages it delivers and when.
type step struct {
	now      time.Time
	messages []Event
}

// drive runs steps the way a host does, appending each turn's new events to
// the persisted history. With live set, one Execution and guest serve every
// turn; otherwise each turn replays from scratch on a fresh guest.
func drive(t *testing.T, handle func(*fakeGuest, abi.Job) []abi.Command, live bool, steps []step) ([]Event, []*TurnResult) {
	t.Helper()
	var history []Event
	var results []*TurnResult
	x := newExecution(newGuest(handle))
	for _, s := range steps {
		if !live {
			x = newExecution(newGuest(handle))
		}
		res, err := x.Turn(TurnInput{History: history, Messages: s.messages, Now: s.now})
		if err != nil {
			t.Fatalf("turn at %s: %v", s.now, err)
		}
		if res.Err != nil {
			t.Fatalf("turn at %s failed the instance: %v", s.now, res.Err)
		}
		history = append(history, res.NewEvents...)
		results = append(results, res)
	}
	return history, results
}

var retrySteps = []step{
	{at(0), []Event{started(`{}`)}},
	{at(1), []Event{activityFailed(2, "flaky")}},
	{at(2), []Event{timerFired(4, 2)}},
	{at(3), []Event{activityDone(6, `"success"`)}},
}

func TestRetryWalkthroughHistory(t *testing.T) {
	t.Parallel()
	history, results := drive(t, retry, true, retrySteps)
	want := []EventKind{OrchestrationStarted, ActivityScheduled, ActivityFailed, TimerCreated, TimerFired, ActivityScheduled, ActivityCompleted, OrchestrationCompleted}
	if got := kinds(history); !reflect.DeepEqual(got, want) {
		t.Fatalf("history kinds:\n got %v\nwant %v", got, want)
	}
	for i, e := range history {
		if e.ID != int64(i+1) {
			t.Errorf("event %d has ID %d", i+1, e.ID)
		}
	}
	// The timer is due one second after the logical time of the failure
	// that scheduled it.
	if got := history[3].FireAt; got == nil || !got.Equal(at(2)) {
		t.Errorf("TimerCreated.FireAt = %v, want %v", got, at(2))
	}
	if got := results[1].Timers; len(got) != 1 || got[0].ScheduleID != 4 || !got[0].FireAt.Equal(at(2)) {
		t.Errorf("turn 2 timers = %+v", got)
	}
	if got := results[2].Activities; !reflect.DeepEqual(got, []ActivityTask{{ScheduleID: 6, Name: "FlakyTask", Input: json.RawMessage("2")}}) {
		t.Errorf("turn 3 activities = %+v", got)
	}
	last := results[len(results)-1]
	if last.Status != StatusCompleted || string(last.Result) != `"success"` {
		t.Errorf("final status %s result %s", last.Status, last.Result)
	}
}

func TestLiveAndReplayedHistoriesAreIdentical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		handle func(*fakeGuest, abi.Job) []abi.Command
		steps  []step
	}{
		{"retry", retry, retrySteps},
		{"fan-out with completions out of order", fanOut, []step{
			{at(0), []Event{started(`null`)}},
			{at(5), []Event{activityDone(3, `"b"`), activityDone(2, `"a"`)}},
		}},
		{"hello", hello, []step{
			{at(0), []Event{started(`"world"`)}},
			{at(1), []Event{activityDone(2, `"Hello, world!"`)}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live, _ := drive(t, tt.handle, true, tt.steps)
			replayed, _ := drive(t, tt.handle, false, tt.steps)
			a, _ := json.Marshal(live)
			b, _ := json.Marshal(replayed)
			if string(a) != string(b) {
				t.Fatalf("histories differ:\nlive     %s\nreplayed %s", a, b)
			}
		})
	}
}

func TestActivationsCarryLogicalTimeAndReplayFlag(t *testing.T) {
	t.Parallel()
	g := newGuest(hello)
	x := newExecution(g)
	res, err := x.Turn(TurnInput{
		History:  hist(started(`"world"`), scheduled("SayHello", `"world"`)),
		Messages: []Event{activityDone(2, `"hi"`)},
		Now:      at(10),
	})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	want := []abi.Activation{
		{Time: at(0).UnixNano(), Replaying: true, Jobs: []abi.Job{{Kind: abi.JobStart, Name: "Test", InstanceID: "i1", Input: []byte(`"world"`)}},
			HistoryLength: 1, HistorySize: 13},
		{Time: at(10).UnixNano(), Replaying: false, Jobs: []abi.Job{{Kind: abi.JobResolveActivity, Seq: 1, Result: []byte(`"hi"`)}},
			HistoryLength: 3, HistorySize: 32},
	}
	if !reflect.DeepEqual(g.activations, want) {
		t.Fatalf("activations:\n got %+v\nwant %+v", g.activations, want)
	}
	if got := kinds(res.NewEvents); !reflect.DeepEqual(got, []EventKind{ActivityCompleted, OrchestrationCompleted}) {
		t.Fatalf("new events %v", got)
	}
	if res.NewEvents[0].ID != 3 || !res.NewEvents[1].Time.Equal(at(10)) {
		t.Fatalf("new events %+v", res.NewEvents)
	}
}

func TestMessages(t *testing.T) {
	t.Parallel()
	fanOutHistory := hist(started(`null`), scheduled("A", "null"), scheduled("B", "null"), activityDone(2, `"a"`))
	tests := []struct {
		name        string
		handle      func(*fakeGuest, abi.Job) []abi.Command
		history     []Event
		messages    []Event
		wantKinds   []EventKind
		wantDropped []string
		wantStatus  Status
	}{
		{
			name: "duplicate completion is dropped, the other applied", handle: fanOut, history: fanOutHistory,
			messages:    []Event{activityDone(2, `"a again"`), activityDone(3, `"b"`)},
			wantKinds:   []EventKind{ActivityCompleted, OrchestrationCompleted},
			wantDropped: []string{"event 2 is not an open operation (a duplicate delivery, or it already completed)"},
			wantStatus:  StatusCompleted,
		},
		{
			name: "messages after completion are dropped", handle: fanOut, history: fanOutHistory,
			messages:    []Event{activityDone(3, `"b"`), timerFired(9, 1)},
			wantKinds:   []EventKind{ActivityCompleted, OrchestrationCompleted},
			wantDropped: []string{"the instance is already Completed"},
			wantStatus:  StatusCompleted,
		},
		{
			name: "completion of the wrong kind is dropped", handle: fanOut, history: fanOutHistory,
			messages:    []Event{timerFired(3, 1)},
			wantDropped: []string{"event 3 is a ActivityScheduled, not a TimerCreated"},
			wantStatus:  StatusRunning,
		},
		{
			name: "a second start is dropped", handle: fanOut, history: fanOutHistory,
			messages:    []Event{started(`null`)},
			wantDropped: []string{"the instance has already started"},
			wantStatus:  StatusRunning,
		},
		{
			// What a damaged message row decodes to.
			name: "a failure without its failure is dropped", handle: hello,
			history:     hist(started(`"world"`), scheduled("SayHello", `"world"`)),
			messages:    []Event{{Kind: ActivityFailed, ScheduleID: 2}},
			wantDropped: []string{"the ActivityFailed has no failure"},
			wantStatus:  StatusRunning,
		},
		{
			name: "activity failure reaches the orchestration", handle: hello,
			history:    hist(started(`"world"`), scheduled("SayHello", `"world"`)),
			messages:   []Event{activityFailed(2, "no greeting today")},
			wantKinds:  []EventKind{ActivityFailed, OrchestrationFailed},
			wantStatus: StatusFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := newExecution(newGuest(tt.handle)).Turn(TurnInput{History: tt.history, Messages: tt.messages, Now: at(30)})
			if err != nil || res.Err != nil {
				t.Fatal(err, res.Err)
			}
			if got := kinds(res.NewEvents); !reflect.DeepEqual(got, tt.wantKinds) {
				t.Errorf("new events %v, want %v", got, tt.wantKinds)
			}
			var dropped []string
			for _, d := range res.Dropped {
				dropped = append(dropped, d.Reason)
			}
			if !reflect.DeepEqual(dropped, tt.wantDropped) {
				t.Errorf("dropped %q, want %q", dropped, tt.wantDropped)
			}
			if res.Status != tt.wantStatus {
				t.Errorf("status %s, want %s", res.Status, tt.wantStatus)
			}
		})
	}
}

func withTimeout(c abi.Command, ms uint64) abi.Command {
	c.TimeoutMillis = ms
	return c
}

func withRetry(c abi.Command, p *abi.RetryPolicy) abi.Command {
	c.Retry = p
	return c
}

func onQueue(c abi.Command, queue string, heartbeatMs uint64) abi.Command {
	c.TaskQueue, c.HeartbeatTimeoutMillis = queue, heartbeatMs
	return c
}

// TestActivityTimeoutIsRecordedAndReplayed pins that a call's timeout,
// task queue, heartbeat timeout and retry policy are in its
// ActivityScheduled event and its task, and that the same command
// replays against that event.
func TestActivityTimeoutIsRecordedAndReplayed(t *testing.T) {
	t.Parallel()
	handle := func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			c := onQueue(withTimeout(activity("Charge", `5`), 1500), "payments", 800)
			c.Retry = &abi.RetryPolicy{MaximumAttempts: 3, InitialIntervalMillis: 100, NonRetryable: []string{"Declined"}}
			return []abi.Command{c}
		}
		return nil
	}
	res, err := newExecution(newGuest(handle)).Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(1)})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	policy := &RetryPolicy{MaximumAttempts: 3, InitialIntervalMs: 100, NonRetryable: []string{"Declined"}}
	if got := res.NewEvents[len(res.NewEvents)-1]; got.Kind != ActivityScheduled || got.TimeoutMs != 1500 || got.TaskQueue != "payments" || got.HeartbeatTimeoutMs != 800 ||
		!reflect.DeepEqual(got.Retry, policy) {
		t.Fatalf("recorded %+v, want ActivityScheduled with TimeoutMs 1500, TaskQueue payments, HeartbeatTimeoutMs 800, Retry %+v", got, policy)
	}
	if want := []ActivityTask{{ScheduleID: 2, Name: "Charge", Input: json.RawMessage(`5`), Timeout: 1500 * time.Millisecond,
		Queue: "payments", HeartbeatTimeout: 800 * time.Millisecond, Retry: policy}}; !reflect.DeepEqual(res.Activities, want) {
		t.Fatalf("activities %+v, want %+v", res.Activities, want)
	}
	replayed, err := newExecution(newGuest(handle)).Turn(TurnInput{History: res.NewEvents, Now: at(2)})
	if err != nil || replayed.Err != nil {
		t.Fatalf("replay of the same timeout: %v %v", err, replayed.Err)
	}
}

func TestNondeterminism(t *testing.T) {
	t.Parallel()
	emits := func(cmds ...abi.Command) func(*fakeGuest, abi.Job) []abi.Command {
		return func(_ *fakeGuest, j abi.Job) []abi.Command {
			if j.Kind == abi.JobStart {
				return cmds
			}
			return nil
		}
	}
	sayHello := scheduled("SayHello", `"world"`)
	tests := []struct {
		name     string
		handle   func(*fakeGuest, abi.Job) []abi.Command
		history  []Event
		wantCode NondeterminismCode
		wantErr  string
	}{
		{
			name: "missing command", handle: emits(), history: hist(started(`"world"`), sayHello),
			wantCode: MissingCommand,
			wantErr:  `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world"), the orchestration emitted nothing`,
		},
		{
			name: "changed activity name", handle: emits(activity("SayGoodbye", `"world"`)), history: hist(started(`"world"`), sayHello),
			wantCode: ChangedCommand,
			wantErr:  `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world"), the orchestration emitted ScheduleActivity("SayGoodbye", "world")`,
		},
		{
			name: "changed activity input", handle: emits(activity("SayHello", `"moon"`)), history: hist(started(`"world"`), sayHello),
			wantCode: ChangedCommand,
			wantErr:  `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world"), the orchestration emitted ScheduleActivity("SayHello", "moon")`,
		},
		{
			name: "changed activity timeout", handle: emits(withTimeout(activity("SayHello", `"world"`), 60000)),
			history:  hist(started(`"world"`), Event{Kind: ActivityScheduled, Name: "SayHello", Input: json.RawMessage(`"world"`), TimeoutMs: 30000}),
			wantCode: ChangedCommand,
			wantErr:  `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world", timeout 30s), the orchestration emitted ScheduleActivity("SayHello", "world", timeout 1m0s)`,
		},
		{
			name: "activity timeout added", handle: emits(withTimeout(activity("SayHello", `"world"`), 200)), history: hist(started(`"world"`), sayHello),
			wantCode: ChangedCommand,
			wantErr:  `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world"), the orchestration emitted ScheduleActivity("SayHello", "world", timeout 200ms)`,
		},
		{
			name: "changed task queue", handle: emits(onQueue(activity("SayHello", `"world"`), "payments", 0)),
			history:  hist(started(`"world"`), Event{Kind: ActivityScheduled, Name: "SayHello", Input: json.RawMessage(`"world"`), TaskQueue: "billing", HeartbeatTimeoutMs: 5000}),
			wantCode: ChangedCommand,
			wantErr:  `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world", queue "billing", heartbeat timeout 5s), the orchestration emitted ScheduleActivity("SayHello", "world", queue "payments")`,
		},
		{
			name: "changed retry policy", handle: emits(withRetry(activity("SayHello", `"world"`), &abi.RetryPolicy{MaximumAttempts: 5, InitialIntervalMillis: 1000})),
			history: hist(started(`"world"`), Event{Kind: ActivityScheduled, Name: "SayHello", Input: json.RawMessage(`"world"`),
				Retry: &RetryPolicy{MaximumAttempts: 3, InitialIntervalMs: 1000, BackoffThousandths: 1500, MaximumIntervalMs: 60000, NonRetryable: []string{"Declined"}}}),
			wantCode: ChangedCommand,
			wantErr: `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world", retry up to 3 attempts, 1s ×1.5 at most 1m0s, not ["Declined"]), ` +
				`the orchestration emitted ScheduleActivity("SayHello", "world", retry up to 5 attempts, 1s ×2)`,
		},
		{
			name: "a retry policy where history has none", handle: emits(withRetry(activity("SayHello", `"world"`), &abi.RetryPolicy{})),
			history: hist(started(`"world"`), sayHello), wantCode: ChangedCommand,
			wantErr: `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world"), the orchestration emitted ScheduleActivity("SayHello", "world", retry up to 1 attempts, 0s ×2)`,
		},
		{
			name: "changed kind", handle: emits(timer(30 * time.Second)), history: hist(started(`"world"`), sayHello),
			wantCode: ChangedCommand,
			wantErr:  `nondeterminism at event 2: history has ActivityScheduled("SayHello", "world"), the orchestration emitted StartTimer(30s)`,
		},
		{
			name: "reordered commands", handle: emits(activity("B", "null"), activity("A", "null")),
			history:  hist(started(`null`), scheduled("A", "null"), scheduled("B", "null")),
			wantCode: ReorderedCommand,
			wantErr:  `nondeterminism at event 2: history has ActivityScheduled("A", null), the orchestration emitted ScheduleActivity("B", null), which history has later (commands reordered)`,
		},
		{
			name: "extra command before a completion", handle: emits(activity("SayHello", `"world"`), activity("Extra", "null")),
			history:  hist(started(`"world"`), sayHello, activityDone(2, `"hi"`)),
			wantCode: ExtraCommand,
			wantErr:  `nondeterminism at event 3: history has ActivityCompleted(event 2, "hi"), the orchestration emitted ScheduleActivity("Extra", null), which history does not have`,
		},
		{
			name: "extra command at the end of history", handle: emits(activity("SayHello", `"world"`), activity("Extra", "null")),
			history:  hist(started(`"world"`), sayHello),
			wantCode: ExtraCommand,
			wantErr:  `nondeterminism at event 3: history has nothing more, the orchestration emitted ScheduleActivity("Extra", null), which history does not have`,
		},
		{
			name: "extra command before the end of the orchestration",
			handle: func(_ *fakeGuest, j abi.Job) []abi.Command {
				if j.Kind == abi.JobStart {
					return []abi.Command{activity("SayHello", `"world"`)}
				}
				return []abi.Command{activity("Extra", "null"), complete(`"hi"`)}
			},
			history:  hist(started(`"world"`), sayHello, activityDone(2, `"hi"`), Event{Kind: OrchestrationCompleted, Result: json.RawMessage(`"hi"`)}),
			wantCode: ExtraCommand,
			wantErr:  `nondeterminism at event 4: history has OrchestrationCompleted("hi"), the orchestration emitted ScheduleActivity("Extra", null), which history does not have`,
		},
		{
			name:     "waits for events in another order",
			handle:   emits(abi.Command{Kind: abi.CommandWaitEvent, Name: "Shipped"}, abi.Command{Kind: abi.CommandWaitEvent, Name: "Paid"}),
			history:  hist(started(`null`), Event{Kind: ExternalSubscribed, Name: "Paid"}, Event{Kind: ExternalSubscribed, Name: "Shipped"}),
			wantCode: ReorderedCommand,
			wantErr:  `nondeterminism at event 2: history has ExternalSubscribed("Paid"), the orchestration emitted WaitEvent("Shipped"), which history has later (commands reordered)`,
		},
		{
			// The custom status is what clients read while the instance
			// runs: code that sets another text does not reproduce the
			// history.
			name: "changed custom status", handle: emits(abi.Command{Kind: abi.CommandSetCustomStatus, Name: "charging the card"}, wait("Paid")),
			history:  hist(started(`null`), Event{Kind: CustomStatusSet, CustomStatus: "charging the card twice"}, Event{Kind: ExternalSubscribed, Name: "Paid"}),
			wantCode: ChangedCommand,
			wantErr:  `nondeterminism at event 2: history has CustomStatusSet("charging the card twice"), the orchestration emitted SetCustomStatus("charging the card")`,
		},
		{
			name: "completion without its schedule", handle: emits(activity("SayHello", `"world"`)),
			history:  hist(started(`"world"`), sayHello, activityDone(7, `"hi"`)),
			wantCode: UnmatchedCompletion,
			wantErr:  `nondeterminism at event 3: history has ActivityCompleted(event 7, "hi"), which completes no open operation`,
		},
		{
			name: "completion of the wrong kind", handle: emits(activity("SayHello", `"world"`)),
			history:  hist(started(`"world"`), sayHello, timerFired(2, 5)),
			wantCode: UnmatchedCompletion,
			wantErr:  `nondeterminism at event 3: history has TimerFired(event 2), which completes no open operation`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := newExecution(newGuest(tt.handle)).Turn(TurnInput{History: tt.history, Now: at(60)})
			if err != nil {
				t.Fatal(err)
			}
			var nd *NondeterminismError
			if !errors.As(res.Err, &nd) {
				t.Fatalf("err = %v, want a NondeterminismError", res.Err)
			}
			if nd.Code != tt.wantCode {
				t.Errorf("code %s, want %s", nd.Code, tt.wantCode)
			}
			if res.Err.Error() != tt.wantErr {
				t.Errorf("error:\n got %s\nwant %s", res.Err, tt.wantErr)
			}
			if tt.history[len(tt.history)-1].IsTerminal() {
				// A finished execution's history stays as it is.
				if len(res.NewEvents) != 0 {
					t.Errorf("appended %v to a finished history", kinds(res.NewEvents))
				}
				return
			}
			last := res.NewEvents[len(res.NewEvents)-1]
			if res.Status != StatusFailed || last.Kind != OrchestrationFailed || last.Failure.Message != tt.wantErr {
				t.Errorf("status %s, last new event %+v", res.Status, last)
			}
			if last.ID != int64(len(tt.history)+1) {
				t.Errorf("failure recorded as event %d, want %d", last.ID, len(tt.history)+1)
			}
		})
	}
}

func TestTimersMatchByPosition(t *testing.T) {
	t.Parallel()
	history := hist(started(`null`), Event{Kind: TimerCreated, FireAt: fireAt(999)})
	g := newGuest(func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return []abi.Command{timer(5 * time.Second)}
		}
		return []abi.Command{complete(`"late"`)}
	})
	res, err := newExecution(g).Turn(TurnInput{History: history, Messages: []Event{timerFired(2, 999)}, Now: at(999)})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	if res.Status != StatusCompleted || string(res.Result) != `"late"` {
		t.Fatalf("status %s result %s", res.Status, res.Result)
	}
}

func TestGuestCrashFailsTheInstance(t *testing.T) {
	t.Parallel()
	g := newGuest(hello)
	g.crash = errBoom
	res, err := newExecution(g).Turn(TurnInput{Messages: []Event{started(`"world"`), activityDone(2, `"x"`)}, Now: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(res.NewEvents); !reflect.DeepEqual(got, []EventKind{OrchestrationStarted, OrchestrationFailed}) {
		t.Fatalf("new events %v", got)
	}
	const want = "orchestration crashed applying event 1: boom"
	if res.Status != StatusFailed || res.Failure.Message != want || !errors.Is(res.Err, errBoom) {
		t.Fatalf("status %s failure %+v err %v", res.Status, res.Failure, res.Err)
	}
	if len(res.Dropped) != 1 || res.Dropped[0].Reason != "the instance failed" {
		t.Fatalf("dropped %+v", res.Dropped)
	}
}

func TestAnOrchestrationWaitingOnNothingFails(t *testing.T) {
	t.Parallel()
	// It starts, schedules nothing and does not end; then, on replay, the
	// same again: both fail, and the history says why.
	idle := func(*fakeGuest, abi.Job) []abi.Command { return nil }
	res, err := newExecution(newGuest(idle)).Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(res.NewEvents); !reflect.DeepEqual(got, []EventKind{OrchestrationStarted, OrchestrationFailed}) {
		t.Fatalf("new events %v", got)
	}
	if res.Status != StatusFailed || res.Failure.Message != ErrWaitsOnNothing.Error() || !errors.Is(res.Err, ErrWaitsOnNothing) {
		t.Fatalf("status %s failure %+v err %v", res.Status, res.Failure, res.Err)
	}
	replayed, err := newExecution(newGuest(idle)).Turn(TurnInput{History: res.NewEvents, Now: at(1)})
	if err != nil || replayed.Err != nil || replayed.Status != StatusFailed || len(replayed.NewEvents) != 0 {
		t.Fatalf("replay: %+v, %v", replayed, err)
	}
	// An activity that completes and leaves nothing open does the same.
	waitsOnce := func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return []abi.Command{activity("A", "null")}
		}
		return nil
	}
	history, _ := drive(t, waitsOnce, true, []step{{at(0), []Event{started(`null`)}}})
	res, err = newExecution(newGuest(waitsOnce)).Turn(TurnInput{History: history, Messages: []Event{activityDone(2, `1`)}, Now: at(1)})
	if err != nil || res.Status != StatusFailed || !errors.Is(res.Err, ErrWaitsOnNothing) {
		t.Fatalf("status %s err %v, %v", res.Status, res.Err, err)
	}
}

func TestStaleHistoryIsRefused(t *testing.T) {
	t.Parallel()
	x := newExecution(newGuest(hello))
	res, err := x.Turn(TurnInput{Messages: []Event{started(`"world"`)}, Now: at(0)})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	// The commit of that turn failed, so the caller still has no history.
	if _, err := x.Turn(TurnInput{Messages: []Event{activityDone(2, `"x"`)}, Now: at(1)}); !errors.Is(err, ErrStale) {
		t.Fatalf("err = %v, want ErrStale", err)
	}
}

func TestCommandSequenceIsChecked(t *testing.T) {
	t.Parallel()
	g := &badSeqGuest{}
	res, err := newExecution(g).Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
	if err != nil {
		t.Fatal(err)
	}
	const want = "engine: the guest numbered a command 5 where 1 was next (a guest SDK bug)"
	if res.Err == nil || res.Err.Error() != want {
		t.Fatalf("err = %v, want %s", res.Err, want)
	}
}

type badSeqGuest struct{}

func (badSeqGuest) Activate(*abi.Activation) ([]abi.Command, error) {
	c := activity("A", "null")
	c.Seq = 5
	return []abi.Command{c}, nil
}
