package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/store"
)

// TestDashboardSendsUpdates drives the order example's page in Chromium
// with the admin token: the handlers it lists, an update answered (and
// its rows in the timeline), one its validator refuses, writing nothing,
// and the Submit that ends the order.
func TestDashboardSendsUpdates(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/order")
	srv := dashboardServer(t, h.Host)
	id := h.start(t, "Order", `"c-42"`)
	h.awaitEvents(t, id, 2)

	b.do("open the dashboard", chromedp.Navigate(srv.URL+"/"))
	b.giveToken(adminToken)
	b.open("#/instances/"+id, `#instance-status [data-status="Running"]`)
	b.do("list the handlers", chromedp.Click(chromedp.CSS("#list-handlers")))
	b.waitFor("the handlers", `document.querySelector("#handlers").className === "ok"`)
	if got := b.text("#handlers"); got != "Queries: Summary. Updates: AddLine, Submit." {
		t.Errorf("the handlers show %q", got)
	}
	send := func(name, data string) string {
		t.Helper()
		b.do("update "+name,
			chromedp.Click(chromedp.CSS("#action-update")),
			chromedp.SendKeys(chromedp.CSS("#update-name"), name),
			chromedp.SetValue(chromedp.CSS("#update-data"), data),
			chromedp.Click(chromedp.CSS(`#update-form button[type="submit"]`)))
		b.waitFor("the answer to "+name, `document.querySelector("#action-message").textContent !== ""`)
		return b.text("#action-message")
	}
	if got := send("AddLine", `{"sku": "A-7", "qty": 2}`); !strings.HasPrefix(got, "Update AddLine (") || !strings.HasSuffix(got, ") answered 500.") {
		t.Errorf("the answer shows %q", got)
	}
	b.waitFor("the update in the timeline", `document.querySelector('#timeline tr[data-kind="UpdateCompleted"]') !== null`)
	if got := b.text(`#timeline tr[data-kind="UpdateAccepted"]`); !strings.Contains(got, "AddLine") || !strings.Contains(got, `"sku":"A-7"`) {
		t.Errorf("the accepted update's row shows %q", got)
	}
	before := len(h.history(t, id))
	if got := send("AddLine", `{"sku": "B-1", "qty": 0}`); got != "Update AddLine refused, and nothing of it written: a line needs a sku and a quantity of at least 1" {
		t.Errorf("the refusal shows %q", got)
	}
	if after := len(h.history(t, id)); after != before {
		t.Errorf("the refused update wrote history: %d events, then %d", before, after)
	}
	if got := send("Submit", `null`); got != `Update Submit (`+updateIDIn(got)+`) answered "receipt-500".` {
		t.Errorf("the submit shows %q", got)
	}
	b.waitFor("the order completed", `document.querySelector('#instance-status [data-status="Completed"]') !== null`)
	if inst := h.wait(t, id); inst.Status != engine.StatusCompleted {
		t.Errorf("%s: %s", id, inst.Status)
	}
	u, err := h.st.GetUpdate(context.Background(), id, updateIDIn(b.text("#action-message")))
	if err != nil || u.State != store.UpdateCompleted {
		t.Errorf("the dashboard's Submit in the store: %+v, %v", u, err)
	}
}

// updateIDIn returns the update id an answer the dashboard shows names,
// in its parentheses.
func updateIDIn(s string) string {
	_, rest, _ := strings.Cut(s, "(")
	id, _, _ := strings.Cut(rest, ")")
	return id
}
