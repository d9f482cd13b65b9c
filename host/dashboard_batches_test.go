package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestDashboardBatches drives the dashboard's bulk action in a headless
// Chromium against a real host running the attributes guest: from the
// instance list filtered on customer c-42, a dry run of a cancel shows
// the two orders it would take and changes nothing; Start batch opens the
// batch's page, which shows its progress to the end; the orders of c-42
// are cancelled, the others not; the batches page lists it. With the
// read-only token there is no bulk action and no Batches tab. It takes
// the screenshot of docs/batches.md (with -update, into docs/).
func TestDashboardBatches(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	h := startHost(t, host.Options{})
	h.deploy(t, attributesGuest)
	startOrders(t, h, map[string]string{"o1": "c-42", "o2": "c-7", "o3": "c-42", "o4": "c-9"})
	srv := dashboardServer(t, h.Host)
	ctx := context.Background()
	running := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			if inst, err := h.Instance(ctx, id); err != nil || inst.Status != engine.StatusRunning {
				t.Fatalf("%s is %s (%v); want it running, untouched", id, inst.Status, err)
			}
		}
	}

	b.do("open the dashboard", chromedp.Navigate(srv.URL+"/"))
	b.giveToken(adminToken)
	b.open(`#/instances?where=customer%20%3D%20%22c-42%22`, `#instances tr[data-id="o3"]`)
	b.do("a dry run", chromedp.SendKeys(chromedp.CSS("#bulk-reason"), "withdrawn offer"), chromedp.Click(chromedp.CSS("#bulk-dry-run")))
	b.waitFor("the dry run's instances", `document.querySelectorAll("#bulk-ids li").length === 2`)
	if got := b.text("#bulk-result"); !strings.Contains(got, "cancel would take 2 instances") || !strings.Contains(got, "o1") || !strings.Contains(got, "o3") {
		t.Errorf("the dry run shows %q; want cancel of o1 and o3", got)
	}
	running("o1", "o2", "o3", "o4")
	png := b.screenshot()

	b.do("start the batch", chromedp.Click(chromedp.CSS("#bulk-start")))
	b.waitFor("the batch's progress, to its end", `location.hash === "#/batches/1" && document.querySelector('#batch-overview [data-state="completed"]') !== null`)
	if got := b.text("#batch-progress"); !strings.Contains(got, "2 of 2: 2 done, 0 failed, 0 skipped") {
		t.Errorf("the batch's progress shows %q", got)
	}
	for _, id := range []string{"o1", "o3"} {
		if inst := h.wait(t, id); inst.Status != engine.StatusCanceled {
			t.Errorf("%s ended %s; want Canceled", id, inst.Status)
		}
	}
	running("o2", "o4")
	b.open("#/batches", `#batches tr[data-batch="1"]`)
	if got := b.text(`#batches tr[data-batch="1"]`); !strings.Contains(got, "cancel: withdrawn offer") || !strings.Contains(got, `where=customer = "c-42"`) || !strings.Contains(got, "completed") {
		t.Errorf("the batches page shows %q", got)
	}

	b.do("forget the token", chromedp.Click(chromedp.CSS("#forget")))
	b.giveToken(readToken)
	b.open("#/instances?status=Running", `#instances tr[data-id="o2"]`)
	if eval[bool](b, `document.querySelector("#bulk") !== null || !document.querySelector('nav a[data-nav="batches"]').hidden`) {
		t.Error("with the read-only token, the bulk action or the Batches tab is shown")
	}

	dir := t.TempDir()
	if *update {
		dir = filepath.Join(guestbuild.Root(), "docs")
	}
	if err := os.WriteFile(filepath.Join(dir, "dashboard-batches.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
