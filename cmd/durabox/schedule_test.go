package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client/fakehost"
)

// Not parallel: runTests runs each case in a directory of its own (t.Chdir).
func TestSchedule(t *testing.T) {
	nightly := func(t *testing.T, h *fakehost.Host) {
		t.Helper()
		if _, err := h.CreateSchedule(context.Background(), api.ScheduleRequest{Name: "nightly", Cron: "0 3 * * *", Timezone: "Europe/Paris",
			Orchestration: "Greeting", Input: json.RawMessage(`"world"`), Overlap: "skip", CatchupWindow: "1h"}); err != nil {
			t.Fatal(err)
		}
	}
	schedules := func(want int) func(*testing.T, *fakehost.Host) {
		return func(t *testing.T, h *fakehost.Host) {
			t.Helper()
			if all, _ := h.Schedules(context.Background()); len(all) != want {
				t.Errorf("%d schedules, want %d", len(all), want)
			}
		}
	}
	runTests(t, []cliTest{
		{
			name: "list a paused one",
			setup: func(t *testing.T, h *fakehost.Host) {
				nightly(t, h)
				if err := h.PauseSchedule(context.Background(), "nightly", ""); err != nil {
					t.Fatal(err)
				}
			},
			args: []string{"schedule", "list"},
			wantStdout: `NAME     WHEN                      STARTS    OVERLAP  NEXT RUN  LAST RUN  STARTED  SKIPPED  MISSED
nightly  0 3 * * * (Europe/Paris)  Greeting  skip     paused    none      0        0        0
`,
		},
		{
			name: "create",
			args: []string{"schedule", "create", "nightly", "--cron", "0 3 * * *", "--timezone", "Europe/Paris", "--start", "Greeting", "--input", `"world"`, "--jitter", "30s"},
			wantStdout: `name             nightly
when             0 3 * * * (Europe/Paris)
starts           Greeting "world"
overlap          skip
catch-up window  1h
jitter           30s
runs             0 started, 0 skipped, 0 missed
`,
			check: schedules(1),
		},
		{
			name:       "create without --start",
			args:       []string{"schedule", "create", "nightly", "--every", "10m"},
			wantCode:   2,
			wantStderr: "durabox schedule: --start is missing: say which orchestration each run starts\n",
			wantUsage:  true,
		},
		{
			name:       "create refused",
			args:       []string{"schedule", "create", "nightly", "--start", "Greeting"},
			wantCode:   1,
			wantStderr: "durabox: create schedule: bad input: a schedule needs a name, and a cron expression or an interval\n",
		},
		{
			name:       "a flag of create elsewhere",
			setup:      nightly,
			args:       []string{"schedule", "pause", "nightly", "--cron", "* * * * *"},
			wantCode:   2,
			wantStderr: "durabox schedule: --cron is for schedule create\n",
			wantUsage:  true,
		},
		{
			name:     "an operation it does not have",
			args:     []string{"schedule", "stop", "nightly"},
			wantCode: 2,
			wantStderr: `durabox schedule: "stop" is not one of create, list, show, pause, resume, trigger, delete
`,
			wantUsage: true,
		},
		{
			name:       "no name",
			args:       []string{"schedule", "show"},
			wantCode:   2,
			wantStderr: "durabox schedule: missing NAME: say which schedule to show\n",
			wantUsage:  true,
		},
		{
			name:  "list",
			setup: nightly,
			args:  []string{"schedule", "list"},
			wantStdout: `NAME     WHEN                      STARTS    OVERLAP  NEXT RUN  LAST RUN  STARTED  SKIPPED  MISSED
nightly  0 3 * * * (Europe/Paris)  Greeting  skip     none      none      0        0        0
`,
		},
		{
			name:       "list none",
			args:       []string{"schedule", "list"},
			wantStdout: "no schedules; create one with `durabox schedule create NAME --cron EXPR --start ORCH`\n",
		},
		{
			name:  "pause",
			setup: nightly,
			args:  []string{"schedule", "pause", "nightly", "--note", "database down"},
			wantStdout: `name             nightly
when             0 3 * * * (Europe/Paris)
starts           Greeting "world"
overlap          skip
catch-up window  1h
paused           database down
runs             0 started, 0 skipped, 0 missed
`,
		},
		{
			name:  "trigger",
			setup: nightly,
			args:  []string{"schedule", "trigger", "nightly"},
			wantStdout: `2025-01-02T03:04:10.000Z  started by hand  nightly:manual:2025-01-02T03:04:10Z
`,
			check: func(t *testing.T, h *fakehost.Host) {
				if sc, _ := h.Schedule(context.Background(), "nightly"); len(sc.Runs) != 1 || sc.Started != 1 {
					t.Errorf("schedule %+v; want the run recorded", sc)
				}
			},
		},
		{
			name: "show",
			setup: func(t *testing.T, h *fakehost.Host) {
				nightly(t, h)
				if _, err := h.TriggerSchedule(context.Background(), "nightly"); err != nil {
					t.Fatal(err)
				}
			},
			args: []string{"schedule", "show", "nightly"},
			wantStdout: `name                      nightly
when                      0 3 * * * (Europe/Paris)
starts                    Greeting "world"
overlap                   skip
catch-up window           1h
runs                      1 started, 0 skipped, 0 missed
2025-01-02T03:04:10.000Z  started by hand  nightly:manual:2025-01-02T03:04:10Z
`,
		},
		{
			name:       "delete",
			setup:      nightly,
			args:       []string{"schedule", "delete", "nightly"},
			wantStdout: "deleted schedule nightly (its 0 runs' instances stay)\n",
			check:      schedules(0),
		},
		{
			name:       "show a schedule that does not exist",
			args:       []string{"schedule", "show", "nope"},
			wantCode:   1,
			wantStderr: "durabox: show schedule: schedule not found: \"nope\"\n",
		},
	})
}
