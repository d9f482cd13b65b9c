package engine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// TestCommandsWithBadNamesOrTextsFailTheInstance has an orchestration
// emit, in its second step, a command whose name or text breaks the ABI's
// rules: the instance fails, naming the command and the rule, with the
// same events whether the guest that ran the first step goes on or a fresh
// one replays it (as after a restart).
func TestCommandsWithBadNamesOrTextsFailTheInstance(t *testing.T) {
	t.Parallel()
	const refused = "engine: the orchestration's command 2 is refused: "
	const nameRule = ": a name is 1 to 256 bytes of UTF-8 without control characters"
	const queueRule = ": a task queue's name is 1 to 100 letters, digits, '.', '_', ':' or '-', starting with a letter or digit"
	tests := []struct {
		name string
		cmd  abi.Command
		want string
	}{
		{"an activity name not UTF-8", activity("Charge\xff", "null"),
			refused + `activity name "Charge\xff" is not valid UTF-8 (at byte 6)` + nameRule},
		{"an empty activity name", activity("", "null"),
			refused + `activity name "" is empty` + nameRule},
		{"a task queue with a space", abi.Command{Kind: abi.CommandScheduleActivity, Name: "Charge", Input: []byte("null"), TaskQueue: "pay ments"},
			refused + `task queue "pay ments" has ' '` + queueRule},
		{"a task queue too long", abi.Command{Kind: abi.CommandScheduleActivity, Name: "Charge", Input: []byte("null"), TaskQueue: strings.Repeat("q", 101)},
			refused + `task queue "` + strings.Repeat("q", 64) + `"… is 101 bytes` + queueRule},
		{"a retry policy with a bad error type", withRetry(activity("Charge", "null"), &abi.RetryPolicy{NonRetryable: []string{"a\x00"}}),
			refused + `retry policy: non-retryable error type "a\x00" holds a control character (U+0000 at byte 1)` + nameRule},
		{"an event name with NUL", abi.Command{Kind: abi.CommandWaitEvent, Name: "go\x00"},
			refused + `event name "go\x00" holds a control character (U+0000 at byte 2)` + nameRule},
		{"a persistent event name too long", abi.Command{Kind: abi.CommandWaitEventPersistent, Name: strings.Repeat("e", 257)},
			refused + `event name "` + strings.Repeat("e", 64) + `"… is 257 bytes` + nameRule},
		{"a change id not UTF-8", abi.Command{Kind: abi.CommandPatch, Name: "\xc3"},
			refused + `change id "\xc3" is not valid UTF-8 (at byte 0)` + nameRule},
		{"a child's name with a tab", abi.Command{Kind: abi.CommandStartChild, Name: "Ship\tit", Input: []byte("null")},
			refused + `child's orchestration name "Ship\tit" holds a control character (U+0009 at byte 4)` + nameRule},
		{"a child's id not UTF-8", abi.Command{Kind: abi.CommandStartChild, Name: "Ship", InstanceID: "c\xff", Input: []byte("null")},
			refused + `child's instance id "c\xff" is not valid UTF-8 (at byte 1)` + nameRule},
		{"a raised event's name empty", abi.Command{Kind: abi.CommandRaise, InstanceID: "other", Input: []byte("null")},
			refused + `event name "" is empty` + nameRule},
		{"a raise at no instance", abi.Command{Kind: abi.CommandRaise, Name: "Ping", Input: []byte("null")},
			refused + `instance id the event is raised at "" is empty` + nameRule},
		{"a custom status not UTF-8", abi.Command{Kind: abi.CommandSetCustomStatus, Name: "status \xff\xfe"},
			refused + `custom status "status \xff\xfe" is not valid UTF-8 (at byte 7): a text is UTF-8`},
		{"a failure message not UTF-8", fail("boom \xff"),
			refused + `failure message "boom \xff" is not valid UTF-8 (at byte 5): a text is UTF-8`},
		{"failure details not UTF-8", abi.Command{Kind: abi.CommandFail, Failure: &abi.Failure{Message: "boom", Details: "\xff"}},
			refused + `failure details "\xff" is not valid UTF-8 (at byte 0): a text is UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orchestration := func(_ *fakeGuest, j abi.Job) []abi.Command {
				if j.Kind == abi.JobStart {
					return []abi.Command{timer(time.Second)}
				}
				return []abi.Command{tt.cmd, complete(`"done"`)}
			}
			live := newExecution(newGuest(orchestration))
			first, err := live.Turn(TurnInput{Messages: []Event{started(`null`)}, Now: at(0)})
			if err != nil || first.Err != nil {
				t.Fatal(err, first.Err)
			}
			history := first.NewEvents
			in := TurnInput{History: history, Messages: []Event{timerFired(2, 1)}, Now: at(1)}
			res, err := live.Turn(in)
			if err != nil {
				t.Fatal(err)
			}
			var te *abi.TextError
			if res.Status != StatusFailed || res.Failure.Message != tt.want || !errors.As(res.Err, &te) {
				t.Fatalf("status %s failure %+v err %v\nwant failure %q", res.Status, res.Failure, res.Err, tt.want)
			}
			cold, err := newExecution(newGuest(orchestration)).Turn(in)
			if err != nil || !reflect.DeepEqual(cold.NewEvents, res.NewEvents) {
				t.Errorf("on a fresh guest: %+v, %v\nwant new events %+v", cold.NewEvents, err, res.NewEvents)
			}
		})
	}
}
