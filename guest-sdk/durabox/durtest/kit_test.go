package durtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

// describe lists a history the way nondeterminism errors show events.
func describe(events []engine.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.String())
	}
	return out
}

func expectHistory(t *testing.T, inst *durtest.Instance, want ...string) {
	t.Helper()
	if got := describe(inst.History()); !reflect.DeepEqual(got, want) {
		t.Fatalf("history of %s:\n  %s\nwant:\n  %s", inst.ID(), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func expectResult(t *testing.T, inst *durtest.Instance, want string) {
	t.Helper()
	var got any
	if err := inst.Result(&got); err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(got); string(raw) != want {
		t.Fatalf("result %s, want %s", raw, want)
	}
}

func expectFailure(t *testing.T, inst *durtest.Instance, status engine.Status, want string) {
	t.Helper()
	var f *engine.Failure
	if err := inst.Result(nil); inst.Status() != status || !errors.As(err, &f) || f.Message != want {
		t.Fatalf("status %s, error %v; want %s with %q", inst.Status(), err, status, want)
	}
}

func TestActivities(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mock func(context.Context, string) (string, error)
		// want is the result, or with failed the failure's message.
		want   string
		failed bool
	}{
		{name: "the module's own", want: `"Hello, world"`},
		{name: "a mock", mock: func(_ context.Context, name string) (string, error) { return "Hi, " + name, nil }, want: `"Hi, world"`},
		{name: "a mock that fails", mock: func(context.Context, string) (string, error) { return "", errors.New("mail server down") }, want: `activity "Hello" failed: mail server down`, failed: true},
		{name: "a mock that panics", mock: func(context.Context, string) (string, error) { panic("oops") }, want: `activity "Hello" failed: panic: oops`, failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := durtest.New(t, durtest.Options{})
			if tt.mock != nil {
				durtest.MockActivity(env, "Hello", tt.mock)
			}
			inst := env.Start("Greet", "world")
			if inst.CustomStatus() != "greeting world" {
				t.Errorf("custom status %q", inst.CustomStatus())
			}
			if tt.failed {
				expectFailure(t, inst, engine.StatusFailed, tt.want)
				return
			}
			expectResult(t, inst, tt.want)
			expectHistory(t, inst, `OrchestrationStarted("Greet", "world")`, `CustomStatusSet("greeting world")`, `ActivityScheduled("Hello", "world")`,
				`ActivityCompleted(event 3, `+tt.want+`)`, `OrchestrationCompleted(`+tt.want+`)`)
		})
	}
}

// ctx.Rand and ctx.NewGUID give each instance its own values, the same on
// every replay (the end of the test replays each history and fails it if
// they were not).
func TestRandAndGUIDDifferPerInstance(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	a, b := env.Start("Draw", nil, "a"), env.Start("Draw", nil, "b")
	drawn := func(inst *durtest.Instance) string {
		var s string
		json.Unmarshal(inst.History()[1].Input, &s)
		if strings.Count(s, " ") != 2 {
			t.Fatalf("instance %s drew %q", inst.ID(), s)
		}
		return s
	}
	if drawn(a) == drawn(b) {
		t.Errorf("instances a and b both drew %q", drawn(a))
	}
	for _, inst := range []*durtest.Instance{a, b} {
		if err := inst.Replay(); err != nil {
			t.Errorf("instance %s: %v", inst.ID(), err)
		}
	}
}

func TestTimersFireWhenTheClockGetsThere(t *testing.T) {
	t.Parallel()
	start := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	env := durtest.New(t, durtest.Options{Start: start})
	inst := env.Start("Nap", "1h")
	expectHistory(t, inst, `OrchestrationStarted("Nap", "1h")`, `TimerCreated(2030-06-01T13:00:00Z)`)
	env.Advance(59 * time.Minute)
	if inst.Status() != engine.StatusRunning {
		t.Fatalf("%s after 59m of a 1h nap", inst.Status())
	}
	env.Advance(2 * time.Minute)
	expectResult(t, inst, `"2030-06-01T13:00:00Z"`)
	if fired := inst.History()[2]; fired.Kind != engine.TimerFired || !fired.Time.Equal(start.Add(time.Hour)) {
		t.Errorf("timer fired as %s at %s", fired.Kind, fired.Time)
	}
	if !env.Now().Equal(start.Add(61 * time.Minute)) {
		t.Errorf("clock at %s", env.Now())
	}
	if env.AdvanceToNext() {
		t.Error("something is still due")
	}
}

func TestPositionalEvents(t *testing.T) {
	t.Parallel()
	t.Run("raised before the wait, dropped", func(t *testing.T) {
		env := durtest.New(t, durtest.Options{})
		inst := env.Start("Later", nil)
		inst.Raise("Decision", "too early")
		dropped := inst.Dropped()
		if len(dropped) != 1 || !strings.HasPrefix(dropped[0].Reason, `no wait for event "Decision" is active`) {
			t.Fatalf("dropped %+v", dropped)
		}
		env.Advance(time.Minute)
		inst.Raise("Decision", "in time")
		expectResult(t, inst, `"in time"`)
	})
	t.Run("raised while waiting, the timer is cancelled", func(t *testing.T) {
		env := durtest.New(t, durtest.Options{})
		inst := env.Start("Approve", time.Hour)
		inst.Raise("Decision", "yes")
		expectResult(t, inst, `"yes"`)
		expectHistory(t, inst, `OrchestrationStarted("Approve", 3600000000000)`, `ExternalSubscribed("Decision")`, `TimerCreated(2025-01-01T01:00:00Z)`,
			`ExternalEvent("Decision", "yes", for event 2)`, `TimerCancelled(event 3)`, `OrchestrationCompleted("yes")`)
	})
	t.Run("the timer wins, the wait is cancelled, a late event dropped", func(t *testing.T) {
		env := durtest.New(t, durtest.Options{})
		inst := env.Start("Approve", time.Hour)
		env.Advance(time.Hour)
		inst.Raise("Decision", "too late")
		expectResult(t, inst, `"expired"`)
		expectHistory(t, inst, `OrchestrationStarted("Approve", 3600000000000)`, `ExternalSubscribed("Decision")`, `TimerCreated(2025-01-01T01:00:00Z)`,
			`TimerFired(event 3)`, `ExternalSubscribedCancelled(event 2)`, `OrchestrationCompleted("expired")`)
		if d := inst.Dropped(); len(d) != 1 || d[0].Reason != "the instance is already Completed" {
			t.Fatalf("dropped %+v", d)
		}
	})
}

func TestPersistentEventsWaitAndCarryOverToTheNextExecution(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Rounds", 1)
	inst.RaisePersistent("Note", "one")
	env.Advance(time.Minute)
	inst.RaisePersistent("Note", "two")
	inst.AdvanceToEnd()
	expectResult(t, inst, `["one","two"]`)
	if inst.Executions() != 3 {
		t.Fatalf("%d executions, want 3", inst.Executions())
	}
	first := describe(inst.ExecutionHistory(1))
	want := []string{`OrchestrationStarted("Rounds", 1)`, `TimerCreated(2025-01-01T00:01:00Z)`, `ExternalEventPersistent("Note", "one")`, `TimerFired(event 2)`, `OrchestrationContinuedAsNew(2)`}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("execution 1: %q, want %q", first, want)
	}
	// The carried events come after the start, whose waits they meet.
	expectHistory(t, inst, `OrchestrationStarted("Rounds", 3)`, `ExternalSubscribedPersistent("Note")`, `ExternalSubscribedPersistent("Note")`,
		`ExternalEventPersistent("Note", "one")`, `ExternalEventPersistent("Note", "two")`, `OrchestrationCompleted(["one","two"])`)
}

// TestShouldContinueAsNew: with Options.HistoryWarning at 4, Loop is
// told to continue as new once its history is past 4 events, at length 5
// (the start, then 2 events a name): two names an execution. Each call's
// input holds the length it was told, which every replay (the Env's at the
// test's end) compares.
func TestShouldContinueAsNew(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{HistoryWarning: 4})
	inst := env.Start("Loop", []string{"a", "b", "c", "d", "e"})
	expectResult(t, inst, `"done"`)
	if inst.Executions() != 3 {
		t.Fatalf("%d executions, want 3", inst.Executions())
	}
	first := describe(inst.ExecutionHistory(1))
	want := []string{`OrchestrationStarted("Loop", ["a","b","c","d","e"])`, `ActivityScheduled("Hello", "a at 1")`, `ActivityCompleted(event 2, "Hello, a at 1")`,
		`ActivityScheduled("Hello", "b at 3")`, `ActivityCompleted(event 4, "Hello, b at 3")`, `OrchestrationContinuedAsNew(["c","d","e"])`}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("execution 1: %q, want %q", first, want)
	}
	if w := inst.ExecutionHistory(1)[0].HistoryWarning; w != 4 {
		t.Fatalf("the start records the warning %d, want 4", w)
	}
}

func TestChildren(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Family", []string{"ada", ""}, "family")
	expectResult(t, inst, `["Hello, ada","child orchestration \"Greet\" failed: activity \"Hello\" failed: no name",`+
		`"child orchestration \"Missing\" failed: child orchestration \"Missing\" could not start: no deployed module registers orchestration \"Missing\""]`)
	var got []string
	for _, c := range inst.Children() {
		got = append(got, c.ID()+" "+string(c.Status()))
	}
	if want := []string{"family~1:2 Completed", "family~1:4 Failed", "family~1:6 Completed"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("children %q, want %q", got, want)
	}
	expectResult(t, env.Instance("family~1:6"), `"Hello, detached"`)
}

// TestWithTimeout pins that a call that takes longer than its
// durabox.WithTimeout fails at its deadline on the fake clock, and one
// that takes less runs.
func TestWithTimeout(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		timeout time.Duration
		want    string
		at      time.Duration
	}{
		{30 * time.Second, `activity "Hello" failed: activity "Hello" timed out: it ran past its 30s deadline for one attempt, which its call set with durabox.WithTimeout`, 30 * time.Second},
		{2 * time.Minute, `"Hello, deadline"`, time.Minute},
	} {
		t.Run(tt.timeout.String(), func(t *testing.T) {
			env := durtest.New(t, durtest.Options{})
			env.ActivityTakes("Hello", time.Minute)
			start := env.Now()
			inst := env.Start("Deadline", tt.timeout)
			inst.AdvanceToEnd()
			if inst.Status() == engine.StatusFailed {
				expectFailure(t, inst, engine.StatusFailed, tt.want)
			} else {
				expectResult(t, inst, tt.want)
			}
			if ended := inst.History()[len(inst.History())-1].Time.Sub(start); ended != tt.at {
				t.Fatalf("ended %s after the start, want %s", ended, tt.at)
			}
		})
	}
}

func TestCancellationReachesOperationsAndChildren(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	env.ActivityTakes("Hello", time.Minute)
	inst := env.Start("Guarded", nil, "guarded")
	env.Advance(10 * time.Second)
	inst.Cancel("enough")
	inst.AdvanceToEnd()
	expectFailure(t, inst, engine.StatusCanceled, "durabox: the instance was cancelled: enough")
	expectHistory(t, inst, `OrchestrationStarted("Guarded", null)`, `SubOrchestrationScheduled("Approve", "guarded~1:2", 3600000000000)`, `ActivityScheduled("Hello", "slow")`,
		`OrchestrationCancelRequested("enough")`, `SubOrchestrationCancelRequested(event 2)`, `ActivityCancelRequested(event 3)`, `ActivityScheduled("Hello", "cleanup")`,
		`ActivityCompleted(event 7, "Hello, cleanup")`, `OrchestrationCanceled("durabox: the instance was cancelled: enough")`)
	child := env.Instance("guarded~1:2")
	expectFailure(t, child, engine.StatusCanceled, "durabox: the instance was cancelled: its parent guarded cancelled it")
	// The child's report and the slow call's result came after their
	// cancellation.
	var dropped []string
	for _, d := range inst.Dropped() {
		dropped = append(dropped, string(d.Message.Kind)+": "+d.Reason)
	}
	if want := []string{"SubOrchestrationFailed: event 2 was cancelled", "ActivityCompleted: event 3 was cancelled"}; !reflect.DeepEqual(dropped, want) {
		t.Fatalf("dropped %q, want %q", dropped, want)
	}
}

func TestRetriesWaitOnTheClock(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		failures int
		want     string
		waits    []time.Duration
	}{
		{"succeeds on the third call", 2, `"ok on call 3"`, []time.Duration{time.Second, 3 * time.Second}},
		{"gives up after four", 10, `activity "Flaky" failed: down (after 4 attempts)`, []time.Duration{time.Second, 3 * time.Second, 9 * time.Second}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := durtest.New(t, durtest.Options{})
			calls := 0
			durtest.MockActivity(env, "Flaky", func(context.Context, any) (string, error) {
				calls++
				if calls <= tt.failures {
					return "", errors.New("down")
				}
				return fmt.Sprintf("ok on call %d", calls), nil
			})
			inst := env.Start("Persevere", nil)
			inst.AdvanceToEnd()
			if inst.Status() == engine.StatusCompleted {
				expectResult(t, inst, tt.want)
			} else {
				expectFailure(t, inst, engine.StatusFailed, tt.want)
			}
			var waits []time.Duration
			for _, e := range inst.History() {
				if e.Kind == engine.TimerCreated {
					waits = append(waits, e.FireAt.Sub(e.Time))
				}
			}
			if !reflect.DeepEqual(waits, tt.waits) {
				t.Fatalf("waits %v, want %v", waits, tt.waits)
			}
		})
	}
}

// TestHostRetriesWaitOnTheClock: a call with a retry policy is retried as
// a host retries it: each attempt after the policy's wait on the fake
// clock, and history holds the call and its one outcome, with the
// attempts; a non-retryable error type ends it at once.
func TestHostRetriesWaitOnTheClock(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		failures int
		fatal    bool
		want     string
		attempts int64
		took     time.Duration
	}{
		{"succeeds on the third attempt", 2, false, `"ok on attempt 3"`, 3, 4 * time.Second},
		{"gives up after four", 10, false, `activity "Flaky" failed: down (after 4 attempts)`, 4, 13 * time.Second},
		{"a non-retryable type", 10, true, `activity "Flaky" failed: down for good`, 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := durtest.New(t, durtest.Options{})
			start := env.Now()
			durtest.MockActivity(env, "Flaky", func(ctx context.Context, _ any) (string, error) {
				info, _ := durabox.ActivityInfoFrom(ctx)
				switch {
				case tt.fatal:
					return "", durabox.NewError("Fatal", "down for good")
				case info.Attempt <= tt.failures:
					return "", errors.New("down")
				}
				return fmt.Sprintf("ok on attempt %d", info.Attempt), nil
			})
			inst := env.Start("PersevereOnTheHost", nil)
			inst.AdvanceToEnd()
			if inst.Status() == engine.StatusCompleted {
				expectResult(t, inst, tt.want)
			} else {
				expectFailure(t, inst, engine.StatusFailed, tt.want)
			}
			history := inst.History()
			var kinds []engine.EventKind
			for _, e := range history {
				kinds = append(kinds, e.Kind)
			}
			want := []engine.EventKind{engine.OrchestrationStarted, engine.ActivityScheduled, engine.ActivityCompleted, engine.OrchestrationCompleted}
			if inst.Status() != engine.StatusCompleted {
				want[2], want[3] = engine.ActivityFailed, engine.OrchestrationFailed
			}
			if !reflect.DeepEqual(kinds, want) {
				t.Fatalf("history %v, want %v", kinds, want)
			}
			if got := history[2]; got.Attempts != tt.attempts || got.Time.Sub(start) != tt.took {
				t.Fatalf("outcome %s at %s after the start; want %d attempts, %s after", got.String(), got.Time.Sub(start), tt.attempts, tt.took)
			}
		})
	}
}

func TestAfterRaisesAnEventWhileAnActivityRuns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		stop  time.Duration
		want  string
		drops int
	}{
		{"the event first", 5 * time.Minute, `"stopped"`, 1},
		{"the activity first", 15 * time.Minute, `"Hello, race"`, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := durtest.New(t, durtest.Options{})
			env.ActivityTakes("Hello", 10*time.Minute)
			inst := env.Start("Race", nil)
			env.After(tt.stop, func() { inst.Raise("Stop", nil) })
			env.Advance(time.Hour)
			expectResult(t, inst, tt.want)
			if d := inst.Dropped(); len(d) != tt.drops {
				t.Fatalf("dropped %+v", d)
			}
		})
	}
}

// Not parallel: it changes version, which Versioned reads.
func TestReplayCatchesAChangeThatBreaksRecordedHistories(t *testing.T) {
	env := durtest.New(t, durtest.Options{})
	inst := env.Start("Versioned", nil)
	expectResult(t, inst, `"Hello, v1"`)
	// The history as durabox history --json prints it.
	file := filepath.Join(t.TempDir(), "versioned.json")
	raw, err := json.Marshal(map[string]any{"events": inst.History()})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	history, err := durtest.ReadHistory(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := durtest.Replay(history); err != nil {
		t.Fatalf("the unchanged code does not replay its history: %v", err)
	}

	version = 2
	t.Cleanup(func() { version = 1 })
	var nd *engine.NondeterminismError
	want := `nondeterminism at event 2: history has ActivityScheduled("Hello", "v1"), the orchestration emitted ScheduleActivity("Hello", "v2")`
	for name, err := range map[string]error{"Replay": durtest.Replay(history), "Instance.Replay": inst.Replay()} {
		if !errors.As(err, &nd) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a nondeterminism error containing %q", name, err, want)
		}
	}
}

// Not parallel: it changes version, which Versioned reads.
func TestTheEndOfATestReplaysEveryHistory(t *testing.T) {
	for _, tt := range []struct {
		name string
		// change is the version of the code when the test ends.
		change int
		want   []string
	}{
		{"the same code", 1, nil},
		{"changed code", 2, []string{`durtest: instance instance-1 (execution 1) does not replay its own history: nondeterminism at event 2: ` +
			`history has ActivityScheduled("Hello", "v1"), the orchestration emitted ScheduleActivity("Hello", "v2")`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			durtest.New(r, durtest.Options{}).Start("Versioned", nil)
			version = tt.change
			defer func() { version = 1 }()
			for _, c := range slices.Backward(r.cleanups) {
				c()
			}
			if !reflect.DeepEqual(r.errors, tt.want) {
				t.Fatalf("errors %q, want %q", r.errors, tt.want)
			}
		})
	}
}

// TestReadHistoryTakesWhatHistoryPrints: durabox history --json indents
// the JSON values inside events; they read back as the host recorded them.
func TestReadHistoryTakesWhatHistoryPrints(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "indented.json")
	printed := `{
  "events": [
    {
      "id": 1,
      "kind": "ActivityScheduled",
      "time": "2026-01-02T03:04:05Z",
      "name": "Charge",
      "input": {
        "cents": [
          1,
          2
        ]
      }
    }
  ]
}`
	if err := os.WriteFile(file, []byte(printed), 0o644); err != nil {
		t.Fatal(err)
	}
	history, err := durtest.ReadHistory(file)
	if err != nil || len(history) != 1 || string(history[0].Input) != `{"cents":[1,2]}` {
		t.Fatalf("read %+v, %v; want the input compact, as recorded", history, err)
	}
}

func TestReadHistoryRefusesWhatIsNotAHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{"empty.json": `{"events": []}`, "text.json": `hello`} {
		file := filepath.Join(dir, name)
		os.WriteFile(file, []byte(content), 0o644)
		if _, err := durtest.ReadHistory(file); err == nil || err.Error() != "durtest: "+file+" holds no history: save one with durabox history ID --json > "+file {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := durtest.Replay([]engine.Event{{ID: 1, Kind: engine.OrchestrationStarted, Name: "Gone"}}); err == nil ||
		err.Error() != `durtest: the history is of orchestration "Gone", which the test binary does not register` {
		t.Errorf("replay of an unknown orchestration: %v", err)
	}
}

func TestAStuckStepFailsItsInstance(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{StepTimeout: 50 * time.Millisecond})
	inst := env.Start("Stuck", nil)
	expectFailure(t, inst, engine.StatusFailed, "orchestration crashed applying event 1: it ran past its 50ms deadline for one step: "+
		"an endless loop, or a wait on something other than the SDK's futures (a channel, a lock, time.Sleep), which a host reports as a deadlock or a blocking sleep")
	inst.Raise("Anything", nil)
	if d := inst.Dropped(); len(d) != 1 || d[0].Reason != "the instance is already Failed" {
		t.Fatalf("dropped %+v", d)
	}
}

func TestAGoroutineThatUsesTheContextFailsItsInstance(t *testing.T) {
	t.Parallel()
	inst := durtest.New(t, durtest.Options{}).Start("PlainGo", nil)
	expectFailure(t, inst, engine.StatusFailed, "durabox: ctx.CallActivity was called from a goroutine the orchestration started with a go statement (or a finalizer): "+
		"only the orchestration function and the branches it starts with ctx.Go may use its Context and futures, "+
		"since they run one at a time in an order that replays; start the goroutine with ctx.Go, and wait for it with the future ctx.Go returns")
}

// recorder is a testing.TB whose Fatal records what it says and ends the
// goroutine, as the real one does. Its Errorf and Cleanup record too.
type recorder struct {
	testing.TB
	said     string
	errors   []string
	cleanups []func()
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Cleanup(fn func()) { r.cleanups = append(r.cleanups, fn) }

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) { r.said = fmt.Sprint(args...); runtime.Goexit() }

func (r *recorder) Fatalf(format string, args ...any) {
	r.said = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatal runs fn with a recorder and returns what made it fail.
func fatal(t *testing.T, fn func(tb testing.TB)) string {
	r := &recorder{TB: t}
	defer func() {
		for _, c := range slices.Backward(r.cleanups) {
			c()
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r.said
}

func TestMisuseFailsTheTestWithTheReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		do   func(tb testing.TB)
		want string
	}{
		{"unknown orchestration", func(tb testing.TB) { durtest.New(tb, durtest.Options{}).Start("Nope", nil) },
			`durtest: no orchestration "Nope" is registered (the test binary registers [`},
		{"id taken", func(tb testing.TB) {
			env := durtest.New(tb, durtest.Options{})
			env.Start("Greet", "a", "x")
			env.Start("Greet", "b", "x")
		}, `durtest: instance id "x" is already taken`},
		{"input that is not JSON", func(tb testing.TB) { durtest.New(tb, durtest.Options{}).Start("Greet", make(chan int)) },
			"durtest: the input of Greet does not encode to JSON: json: unsupported type: chan int"},
		{"an event without a name", func(tb testing.TB) { durtest.New(tb, durtest.Options{}).Start("Approve", time.Hour).Raise("", nil) },
			`durtest: event name "" is empty: a name is 1 to 256 bytes of UTF-8 without control characters`},
		{"nothing more due", func(tb testing.TB) {
			env := durtest.New(tb, durtest.Options{})
			env.Start("Later", nil).AdvanceToEnd()
		}, `durtest: instance instance-1 is Running and nothing more is due: it waits for something only the test can give, such as an event; its history ends with ExternalSubscribed("Decision")`},
		{"the clock backwards", func(tb testing.TB) { durtest.New(tb, durtest.Options{}).Advance(-time.Second) }, "durtest: the clock cannot go back (Advance(-1s))"},
		{"no such execution", func(tb testing.TB) { durtest.New(tb, durtest.Options{}).Start("Greet", "a").ExecutionHistory(2) },
			"durtest: instance instance-1 has executions 1 to 1, not 2"},
		{"a negative step timeout", func(tb testing.TB) { durtest.New(tb, durtest.Options{StepTimeout: -time.Second}) },
			"durtest: StepTimeout is -1s; it must be zero (for the default, 5s) or more"},
		{"an activity that takes negative time", func(tb testing.TB) { durtest.New(tb, durtest.Options{}).ActivityTakes("Hello", -time.Second) },
			`durtest: activity "Hello" cannot take -1s; give a duration of zero or more`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fatal(t, tt.do); !strings.HasPrefix(got, tt.want) {
				t.Fatalf("failed with %q, want %q", got, tt.want)
			}
		})
	}
}
