package host_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestDashboardWhyItWaits opens, in Chromium, the page of an instance
// whose activity call keeps failing while its timer runs, on a host on a
// fake clock: the page shows the call's attempt, last error and next
// retry, the timer's due time and the last progress; the instance list's
// filters select it by how long it has made no progress and by what it
// waits on. Then it takes the screenshot of docs/operator.md's "Why is it
// waiting?" (with -update, into docs/).
func TestDashboardWhyItWaits(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	// The browser's clock is the real one: the page's "ago" reads well.
	t0 := time.Now().UTC().Truncate(time.Second)
	clock := newFrozenClock(t0)
	h, c, handler := servedOnClock(t, clock, retriesGuest)
	srv := httptest.NewServer(handler)
	defer srv.Close()
	h.startAt(t, "Impatient", `null`, "order-7")
	awaitDetails(t, c, "order-7", "waiting on its call's retry", func(d api.InstanceDetails) bool {
		return len(d.Activities) == 1 && d.Activities[0].NextRetry != nil
	})

	b.do("open the dashboard", chromedp.Navigate(srv.URL+"/"))
	b.open("#/instances/order-7", "#waiting .last-error")
	got := b.text("#waiting")
	for _, want := range []string{
		"Flaky in its module: attempt 1 failed, next attempt at " + dashboardTime(t0.Add(time.Hour)),
		"last error: busy on attempt 1",
		"timer due at " + dashboardTime(t0.Add(30*time.Minute)),
		"Last progress " + dashboardTime(t0),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the instance page's waiting card says\n%s\nwant %q in it", got, want)
		}
	}
	png := b.screenshot()

	clock.set(t0.Add(20 * time.Minute))
	b.open("#/instances?stalledFor=15m&waitingOn=timer", `#instances tr[data-id="order-7"]`)
	if v := b.text("#filter-stalled option:checked") + " " + b.text("#filter-waiting option:checked"); v != "15m timer" {
		t.Errorf("the filters show %q; want 15m and timer chosen", v)
	}
	b.open("#/instances?waitingOn=event", "#instances tbody td.muted")
	if got := b.text("#instances tbody"); got != "No instance matches." {
		t.Errorf("the instances waiting on an event: %q; want none", got)
	}
	b.open("#/instances?stalledFor=1h", "#instances tbody td.muted")

	dir := t.TempDir()
	if *update {
		dir = filepath.Join(guestbuild.Root(), "docs")
	}
	if err := os.WriteFile(filepath.Join(dir, "dashboard-waiting.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dashboardTime is t as the dashboard shows it.
func dashboardTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000") }
