package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
)

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestHistory(t *testing.T) {
	runTests(t, []cliTest{
		{
			name: "history",
			args: []string{"history", "done"},
			wantStdout: `ID  TIME                      KIND                    DETAILS
1   2025-01-02T03:04:07.000Z  OrchestrationStarted    name=Greeting input="world"
2   2025-01-02T03:04:08.000Z  OrchestrationCompleted  result="Hello, world!"
`,
		},
		{
			name:  "a failure",
			setup: startAndWait("Fails", "null", "f"),
			args:  []string{"history", "f"},
			wantStdout: `ID  TIME                      KIND                  DETAILS
1   2025-01-02T03:04:09.000Z  OrchestrationStarted  name=Fails input=null
2   2025-01-02T03:04:10.000Z  OrchestrationFailed   failure="boom"
`,
		},
		{
			name: "--json",
			args: []string{"history", "--json", "done"},
			wantStdout: `{
  "events": [
    {
      "id": 1,
      "kind": "OrchestrationStarted",
      "time": "2025-01-02T03:04:07Z",
      "name": "Greeting",
      "instanceId": "done",
      "input": "world"
    },
    {
      "id": 2,
      "kind": "OrchestrationCompleted",
      "time": "2025-01-02T03:04:08Z",
      "result": "Hello, world!"
    }
  ]
}
`,
		},
		{
			name:       "not found",
			args:       []string{"history", "nope"},
			wantCode:   1,
			wantStderr: "durabox: history: instance not found: \"nope\"\n",
		},
		{
			name:       "an execution that does not exist",
			args:       []string{"history", "done", "--execution", "2"},
			wantCode:   1,
			wantStderr: "durabox: history: execution not found: \"done\" has no execution 2; its executions are 1 to 1\n",
		},
		{
			name:       "an execution past int64",
			args:       []string{"history", "done", "--execution", "9223372036854775808"},
			wantCode:   2,
			wantStderr: "durabox history: invalid value \"9223372036854775808\" for flag --execution: it must be a whole number from 1 to 9223372036854775807 (1 is the first execution; leave --execution out for the current one)\n", wantUsage: true,
		},
	})
}

func TestDetails(t *testing.T) {
	t.Parallel()
	fireAt := time.Date(2025, 1, 2, 3, 5, 0, 0, time.UTC)
	tests := []struct {
		name  string
		event engine.Event
		want  string
	}{
		{"started", engine.Event{Kind: engine.OrchestrationStarted, Name: "Greeting", InstanceID: "i", Input: json.RawMessage(`{ "a": [1, 2] }`)}, `name=Greeting input={"a":[1,2]}`},
		{"scheduled", engine.Event{Kind: engine.ActivityScheduled, Name: "SayHello", Input: json.RawMessage(`"world"`)}, `name=SayHello input="world"`},
		{"completed", engine.Event{Kind: engine.ActivityCompleted, ScheduleID: 2, Result: json.RawMessage(`"hi"`)}, `scheduleId=2 result="hi"`},
		{"failed", engine.Event{Kind: engine.ActivityFailed, ScheduleID: 2, Failure: &engine.Failure{Message: "no\nway", Details: "stack"}}, `scheduleId=2 failure="no\nway"`},
		{"timer", engine.Event{Kind: engine.TimerCreated, FireAt: &fireAt}, `fireAt=2025-01-02T03:05:00.000Z`},
		{"timer fired", engine.Event{Kind: engine.TimerFired, ScheduleID: 3, FireAt: &fireAt}, `scheduleId=3 fireAt=2025-01-02T03:05:00.000Z`},
		{"moved", engine.Event{Kind: engine.ModuleChanged, FromModule: "9f72cbb040f5aaaa", Module: "2b1f08c3aa10bbbb"}, `fromModule=9f72cbb040f5 module=2b1f08c3aa10`},
		{"reset", engine.Event{Kind: engine.ExecutionReset, Module: "2b1f08c3aa10bbbb", SeedExecution: 1, Reason: "reset from execution 1, which had 8 events, to its event 3"},
			`module=2b1f08c3aa10 reason="reset from execution 1, which had 8 events, to its event 3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := details(tt.event); got != tt.want {
				t.Errorf("details %s, want %s", got, tt.want)
			}
		})
	}
}
