package guestkit

import (
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// TestValidatorRefusesWhatTheEngineRefuses feeds the raw cases' validator
// the answers of one execution, activation by activation: a correct run
// passes, and each way of breaking the ABI is refused, saying why.
func TestValidatorRefusesWhatTheEngineRefuses(t *testing.T) {
	t.Parallel()
	type answer struct {
		jobs []abi.Job
		cmds []cmd
	}
	tests := []struct {
		name    string
		answers []answer
		want    string
	}{
		{"a correct run", []answer{
			{nil, []cmd{schedule(1, "Echo", `"a"`), startTimer(2, time.Hour), wait(abi.CommandWaitEventPersistent, 3, "e")}},
			{[]abi.Job{resolve(1, `"a"`)}, []cmd{cancel(abi.CommandCancelTimer, 4, 2), cancel(abi.CommandCancelWait, 5, 3), complete(6, `"a"`)}},
		}, ""},
		{"a seq used again", []answer{
			{nil, []cmd{schedule(1, "Echo", `"a"`)}},
			{[]abi.Job{resolve(1, `"a"`)}, []cmd{schedule(1, "Echo", `"b"`)}},
		}, `command 1, ScheduleActivity(1, Echo, "b") is numbered 1 where 2 was next`},
		{"a seq skipped", []answer{{nil, []cmd{schedule(1, "Echo", `1`), schedule(3, "Echo", `2`)}}},
			`command 2, ScheduleActivity(3, Echo, 2) is numbered 3 where 2 was next`},
		{"a cancel of no operation", []answer{{nil, []cmd{startTimer(1, time.Hour), cancel(abi.CommandCancelTimer, 2, 9)}}},
			`CancelTimer(2, target 9) names command 9, which is not an open operation it cancels`},
		{"a cancel of another kind", []answer{{nil, []cmd{schedule(1, "Echo", `1`), cancel(abi.CommandCancelTimer, 2, 1)}}},
			`CancelTimer(2, target 1) names command 1, which is not an open operation it cancels`},
		{"a cancel of what its job resolved", []answer{
			{nil, []cmd{startTimer(1, time.Hour)}},
			{[]abi.Job{{Kind: abi.JobFireTimer, Seq: 1}}, []cmd{cancel(abi.CommandCancelTimer, 2, 1)}},
		}, `names command 1, which is not an open operation`},
		{"a cancel of a detached child", []answer{{nil, []cmd{
			{Command: abi.Command{Kind: abi.CommandStartChild, Seq: 1, Name: "C", Detached: true}}, cancel(abi.CommandCancelChild, 2, 1)}}},
			`CancelChild(2, target 1) names command 1, which is not an open operation`},
		{"a command after the end", []answer{{nil, []cmd{complete(1, `1`), schedule(2, "Echo", `1`)}}},
			`command 2, ScheduleActivity(2, Echo, 1) comes after the orchestration ended`},
		{"a kind the ABI does not know", []answer{{nil, []cmd{{Command: abi.Command{Kind: 99, Seq: 1}}}}},
			`command 1, command kind 99(1) is of no kind ABI.md knows (1 to 15)`},
		{"an input that is not JSON", []answer{{nil, []cmd{schedule(1, "Echo", `{"a":1,"a":2}`)}}},
			`its JSON is not I-JSON (RFC 7493): the name "a" appears twice in one object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newValidator()
			var err error
			for _, a := range tt.answers {
				var cmds []abi.Command
				for _, c := range a.cmds {
					cmds = append(cmds, c.Command)
				}
				if err = v.check(a.jobs, cmds); err != nil {
					break
				}
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v\nwant an error that says %s", err, tt.want)
			}
		})
	}
}

// TestComparisonsTakeEverySDKsSpelling: JSON is compared by value, a
// failure by what it must contain, and everything else exactly.
func TestComparisonsTakeEverySDKsSpelling(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ a, b string }{
		{`[ 1, 2 ]`, `[1,2]`}, {`{"b":1,"a":[]}`, `{ "a": [], "b": 1 }`}, {``, `null`}, {`1.50`, `1.50`},
	} {
		if canonical([]byte(tt.a)) != canonical([]byte(tt.b)) {
			t.Errorf("%s and %s differ: %s, %s", tt.a, tt.b, canonical([]byte(tt.a)), canonical([]byte(tt.b)))
		}
	}
	for _, tt := range []struct{ a, b string }{{`1`, `2`}, {`["a"]`, `"a"`}, {`{"a":1}`, `{"a":1}x`}, {`1.5`, `1.50`}} {
		if canonical([]byte(tt.a)) == canonical([]byte(tt.b)) {
			t.Errorf("%s and %s are the same: %s", tt.a, tt.b, canonical([]byte(tt.a)))
		}
	}
	got := abi.Command{Kind: abi.CommandFail, Seq: 2, Failure: &abi.Failure{Message: `activity "Boom" failed: boom: x`}}
	if !fail(2, "boom: x").matches(got) || fail(2, "boom: y").matches(got) || fail(3, "boom: x").matches(got) {
		t.Error("a Fail matches by seq and by what its message contains")
	}
	if !schedule(1, "Echo", `[ "a" ]`).matches(abi.Command{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "Echo", Input: []byte(`["a"]`)}) ||
		schedule(1, "Echo", `"a"`).matches(abi.Command{Kind: abi.CommandScheduleActivity, Seq: 1, Name: "Echo", Input: []byte(`"a"`), TimeoutMillis: 5}) {
		t.Error("a ScheduleActivity matches by its JSON's value, and by its timeout")
	}
}
