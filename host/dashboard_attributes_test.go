package host_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/durabox/durabox/host"
)

// TestDashboardSearchAttributes drives the dashboard's filter box and an
// instance's search attributes in a headless Chromium against a real host
// running the attributes guest: the filter lists what it selects, a
// filter that does not parse says why, and an attribute's value on the
// instance page links to the instances with the same.
func TestDashboardSearchAttributes(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	h := startHost(t, host.Options{})
	h.deploy(t, "host/testdata/guests/attributes")
	for id, in := range map[string]string{
		"o1": `{"customer": "c-42", "amount": 150}`,
		"o2": `{"customer": "c-42", "amount": 20}`,
		"o3": `{"customer": "c-7", "amount": 5000}`,
	} {
		if _, err := h.Start(context.Background(), "Order", json.RawMessage(in), id); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, id+" says whether it is paid", func(ctx context.Context) (bool, error) {
			attrs, err := h.Attributes(ctx, id)
			return len(attrs) == 4, err
		})
	}
	srv := dashboardServer(t, h.Host)

	b.do("open the dashboard", chromedp.Navigate(srv.URL+"/"))
	b.giveToken(readToken)
	b.open("#/instances", `#instances tr[data-id="o3"]`)
	b.do("filter", chromedp.SendKeys(chromedp.CSS("#filter-where"), `customer = "c-42" AND amount > 100`),
		chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)))
	b.waitFor("the filtered list", `document.querySelectorAll("#instances tr[data-id]").length === 1 && document.querySelector('#instances tr[data-id="o1"]') !== null`)
	if got := eval[string](b, `document.querySelector("#filter-where").value`); got != `customer = "c-42" AND amount > 100` {
		t.Errorf("the filter box shows %q after the filter is applied", got)
	}

	b.do("a filter that does not parse", chromedp.SetValue(chromedp.CSS("#filter-where"), `customer = c-42`),
		chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)))
	b.waitFor("the refusal", `(document.querySelector("#instances-page .load-error") || {innerText: ""}).innerText.includes("query: at 12: expected a value after customer =")`)

	b.open("#/instances/o1", "#attributes")
	got := b.text("#attributes")
	for _, want := range []string{"customer", `"c-42"`, "amount", "150", "float", "paid", "true", "placed"} {
		if !strings.Contains(got, want) {
			t.Errorf("the instance's search attributes show %q; want %s among them", got, want)
		}
	}
	b.do("follow the customer", chromedp.Click(chromedp.CSS(`#attributes tr[data-name="customer"] a`)))
	b.waitFor("the customer's orders", `document.querySelectorAll("#instances tr[data-id]").length === 2 && document.querySelector('#instances tr[data-id="o2"]') !== null`)
}
