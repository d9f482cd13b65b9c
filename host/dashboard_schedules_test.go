package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestDashboardSchedules drives the dashboard's schedules in a headless
// Chromium against a real host on a fake clock: the list (next run, paused,
// last run), one schedule's next runs and last runs linked to their
// instances, and its Pause and Trigger; then it takes the screenshot of
// docs/schedules.md (with -update, into docs/).
func TestDashboardSchedules(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	h, clock := startScheduled(t)
	srv := dashboardServer(t, h.Host)
	nightly := api.ScheduleRequest{Name: "nightly", Cron: "0 3 * * *", Timezone: "Europe/Paris", Orchestration: "Count", Jitter: "30s"}
	nightly.Paused, nightly.Note = true, "the warehouse is down"
	createSchedule(t, h.Host, nightly)
	createSchedule(t, h.Host, every("tick", "allow-all", `{}`))
	for n := 1; n <= 2; n++ {
		clock.Add(time.Minute)
		h.wait(t, decided(t, h.Host, "tick", n)[n-1].InstanceID)
	}

	b.do("open the dashboard", chromedp.Navigate(srv.URL+"/"))
	b.giveToken(adminToken)
	b.open("#/schedules", `#schedules tr[data-schedule="tick"]`)
	if got := b.text(`#schedules tr[data-schedule="tick"]`); !strings.Contains(got, "every 1m0s") || !strings.Contains(got, "2026-11-27 17:03:00.000") ||
		!strings.Contains(got, "tick:2026-11-27T17:02:00Z") {
		t.Errorf("the row of tick shows %q; want every 1m0s, next at 17:03, last run the slot of 17:02", got)
	}
	if got := b.text(`#schedules tr[data-schedule="nightly"] .next-run`); got != "paused" {
		t.Errorf("the next run of the paused nightly shows %q", got)
	}

	b.open("#/schedules/tick", `#schedule-runs tr[data-outcome="started"]`)
	if got := eval[int](b, `document.querySelectorAll("#next-runs li").length`); got != 5 {
		t.Errorf("%d next runs shown, want 5", got)
	}
	if got := eval[int](b, `document.querySelectorAll("#schedule-runs tr[data-outcome]").length`); got != 2 {
		t.Errorf("%d runs shown, want 2", got)
	}
	b.do("trigger", chromedp.Click(chromedp.CSS("#schedule-trigger")))
	b.waitFor("the manual run", `document.querySelectorAll("#schedule-runs tr[data-outcome]").length === 3`)
	if got := b.text("#schedule-runs tbody tr"); !strings.Contains(got, "started (by hand)") || !strings.Contains(got, "tick:manual:") {
		t.Errorf("the newest run shows %q; want the run started by hand", got)
	}
	png := b.screenshot()
	b.do("pause", chromedp.Click(chromedp.CSS("#schedule-pause")))
	b.waitFor("the schedule paused", `document.querySelector("#schedule-resume") !== null`)
	if sc, err := h.Schedule(context.Background(), "tick"); err != nil || !sc.Paused {
		t.Errorf("after Pause: %+v, %v; want it paused", sc, err)
	}

	// The oldest run, last, links to its instance.
	first := "tick:" + slot(1).Format(time.RFC3339)
	if got := b.text("#schedule-runs tbody tr:last-child a"); got != first {
		t.Errorf("the oldest run links to %q, want %s", got, first)
	}
	b.do("follow a run", chromedp.Click(chromedp.CSS("#schedule-runs tbody tr:last-child a")))
	b.waitFor("the run's instance", `location.hash === "#/instances/" + encodeURIComponent(`+quoted(first)+`) && document.querySelector('#instance-status [data-status="Completed"]') !== null`)

	// With the read-only token, the actions are there, disabled.
	b.do("forget the token", chromedp.Click(chromedp.CSS("#forget")))
	b.giveToken(readToken)
	b.open("#/schedules/tick", "#schedule-trigger")
	if !eval[bool](b, `document.querySelector("#schedule-trigger").disabled && document.querySelector("#schedule-resume").disabled`) {
		t.Error("with the read-only token, Trigger now or Resume is enabled")
	}

	dir := t.TempDir()
	if *update {
		dir = filepath.Join(guestbuild.Root(), "docs")
	}
	if err := os.WriteFile(filepath.Join(dir, "dashboard-schedules.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
