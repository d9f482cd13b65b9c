package host_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/metrics"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
)

var update = flag.Bool("update", false, "write docs/dashboard.png, the README's screenshot, from TestDashboardInChromium, docs/dashboard-schedules.png from TestDashboardSchedules, docs/dashboard-waiting.png from TestDashboardWhyItWaits, and docs/dashboard-batches.png from TestDashboardBatches")

// chromium returns the path of a Chromium the test can drive. When there is
// none it skips the test, saying how to install one, unless
// $DURABOX_REQUIRE_BROWSER is 1 (as in CI), when it fails it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const why = "no Chromium to drive the dashboard: install Debian's with `apt-get install -y chromium` (.ci/run does)"
	if os.Getenv("DURABOX_REQUIRE_BROWSER") == "1" {
		t.Fatal(why + "; $DURABOX_REQUIRE_BROWSER=1 requires it")
	}
	t.Skip(why)
	return ""
}

// browser is a headless Chromium on one tab.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// waitTimeout bounds every wait for the page to show something. The page
// asks the host again every 2 seconds.
const waitTimeout = 30 * time.Second

// newBrowser starts a headless Chromium, with more flags if given.
func newBrowser(t *testing.T, flags ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	// Chromium as root needs --no-sandbox; the machine has no network,
	// so nothing that would reach out is left on.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.DisableGPU, chromedp.NoSandbox, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000)}, flags...)...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	return &browser{t: t, ctx: ctx}
}

// do runs actions, and fails the test with the page's text if one fails.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, b.pageText())
	}
}

// waitFor waits until the JavaScript predicate is true.
func (b *browser) waitFor(what, predicate string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(waitTimeout), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.t.Fatalf("waiting for %s (%s): %v\nthe page shows:\n%s", what, predicate, err, b.pageText())
	}
}

// eval returns the value of a JavaScript expression.
func eval[T any](b *browser, expression string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expression, err)
	}
	return v
}

// text returns the text of the first element sel selects ("" if none).
func (b *browser) text(sel string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf(`document.querySelector(%s)?.innerText ?? ""`, strconv.Quote(sel)))
}

// pageText is what the page shows, for failures.
func (b *browser) pageText() string {
	text, err := chromedp.Run(context.WithoutCancel(b.ctx), chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return text
}

// loaded is true once the page shows what the host said for the
// location.
const loaded = `(p => p !== null && p.dataset.hash === location.hash && p.dataset.loaded === "true")(document.querySelector("main > section"))`

// open shows the dashboard's page at hash, and waits for it to load and
// show sel.
func (b *browser) open(hash, sel string) {
	b.t.Helper()
	b.do("open "+hash, chromedp.Evaluate[chromedp.Void](fmt.Sprintf("location.hash = %s", strconv.Quote(hash))))
	b.waitFor(sel+" on "+hash, fmt.Sprintf("%s && document.querySelector(%s) !== null", loaded, strconv.Quote(sel)))
}

// giveToken answers the dashboard's question for a token.
func (b *browser) giveToken(token string) {
	b.t.Helper()
	b.waitFor("the question for a token", `document.querySelector("#token-form") !== null`)
	b.do("give the token", chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	b.waitFor("the token taken", `document.querySelector("#token-form") === null && document.querySelector("#access").textContent !== ""`)
}

func quoted(s string) string { return strconv.Quote(s) }

// dashboardServer serves h's API and dashboard with adminToken and
// readToken, until the test ends.
func dashboardServer(t *testing.T, h *host.Host) *httptest.Server {
	t.Helper()
	handler, err := server.New(h, server.Options{Token: adminToken, ReadToken: readToken})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// TestDashboardInChromium drives the dashboard in a real headless Chromium
// against a real host with the examples' modules and tokens: it checks
// what the pages show (the instances and their filters, pages and counts,
// an instance's timeline, children and failure, the modules, the queue),
// that a page follows an instance that moves, that the read-only token
// shows the actions disabled, and that the admin token's raise and cancel
// reach the instances; then it takes the README's screenshot.
func TestDashboardInChromium(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ctx := context.Background()
	h := startHost(t, host.Options{Metrics: metrics.New()})
	for _, pkg := range []string{"hello", "approval", "parentchild", "retry"} {
		h.deploy(t, "examples/wasm/"+pkg)
	}
	handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics(), Token: adminToken, ReadToken: readToken})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()

	// More Greetings than a page shows, an order with children, a retry
	// that gives up, and two approvals waiting for a decision.
	const greetings = 52
	var ids []string
	for range greetings {
		ids = append(ids, h.start(t, "Greeting", `"world"`))
	}
	start := func(name, id, input string) {
		t.Helper()
		if _, err := h.Start(ctx, name, json.RawMessage(input), id); err != nil {
			t.Fatal(err)
		}
	}
	start("Parent", "order-1", `["books", "lamp"]`)
	start("Retry", "flaky", `{"attempts": 2, "failures": 5, "delay": "10ms"}`)
	start("Approval", "laptop", `{"item": "laptop", "timeout": "1h"}`)
	start("Approval", "desk", `{"item": "desk", "timeout": "1h"}`)
	for _, id := range append(ids, "order-1", "flaky") {
		h.wait(t, id)
	}
	for _, id := range []string{"laptop", "desk"} {
		waitForCustomStatus(t, h, id)
	}
	// A Flow past the point where a second version of its code changed.
	h.deploy(t, versionsPkg)
	h.startFlow(t, "flow", `"x"`)
	h.passFirst(t, "flow")
	v2 := h.deploy(t, versionsPkg, "main.version=v2")

	// The host asks for a token: the read-only one.
	b.do("open the dashboard", chromedp.Navigate(srv.URL+"/"))
	b.giveToken(readToken)
	if got := b.text("#access"); got != "read-only token" {
		t.Errorf("the header says %q, want read-only token", got)
	}
	b.waitFor("the instances", loaded)
	if got := eval[int](b, `document.querySelectorAll("#instances tbody tr[data-id]").length`); got != 50 {
		t.Errorf("the first page shows %d instances, want 50", got)
	}
	if got := b.text(`#instances tr[data-id="laptop"]`); !strings.Contains(got, "Approval") || !strings.Contains(got, "Running") || !strings.Contains(got, "waiting for a decision on laptop") {
		t.Errorf("the row of laptop shows %q", got)
	}
	if got := b.text(`#counts [data-status="Completed"] .n`); got != strconv.Itoa(greetings+4) { // the Greetings, order-1 and its 3 children
		t.Errorf("the count of Completed is %q, want %d", got, greetings+4)
	}
	// The next page has the rest.
	b.do("the next page", chromedp.Click(chromedp.CSS("#next-page")))
	b.waitFor("the second page", `location.hash.includes("cursor=") && `+loaded)
	first := eval[int](b, `document.querySelectorAll("#instances tbody tr[data-id]").length`)
	if all := greetings + 8; first != all-50 { // order-1 and its 3 children, flaky, laptop, desk, flow
		t.Errorf("the second page shows %d instances, want %d", first, all-50)
	}

	// Filters: the failed ones; then Approvals by their id's beginning.
	b.open("#/instances", `#instances tr[data-id="laptop"]`)
	b.do("filter by status", chromedp.Click(chromedp.CSS(`#filters input[value="Failed"]`)), chromedp.Click(chromedp.CSS(`#filters button[type="submit"]`)))
	b.waitFor("the failed instances", `location.hash.includes("status=Failed") && `+loaded)
	if got := eval[int](b, `document.querySelectorAll("#instances tbody tr[data-id]").length`); got != 1 {
		t.Errorf("%d failed instances shown, want 1", got)
	}
	if got := b.text("#instances tbody tr"); !strings.Contains(got, "flaky") || !strings.Contains(got, "Failed") {
		t.Errorf("the failed instances: %q", got)
	}
	b.open("#/instances?idPrefix=la", `#instances tr[data-id="laptop"]`)
	if got := eval[int](b, `document.querySelectorAll("#instances tbody tr[data-id]").length`); got != 1 {
		t.Errorf("%d instances whose id begins with la shown, want 1", got)
	}

	// The list follows the host: an instance started now shows up.
	b.open("#/instances", `#instances tr[data-id="laptop"]`)
	start("Greeting", "latecomer", `"late"`)
	b.waitFor("the instance started while the page was open", `document.querySelector('#instances tr[data-id="latecomer"]') !== null`)

	// An instance that waits: its timeline and, for the read-only
	// token, its actions disabled.
	b.open("#/instances/laptop", `#instance-status [data-status="Running"]`)
	for _, kind := range []string{"OrchestrationStarted", "ActivityScheduled", "ActivityCompleted", "CustomStatusSet", "ExternalSubscribed", "TimerCreated"} {
		if got := eval[int](b, fmt.Sprintf(`document.querySelectorAll('#timeline tr[data-kind=%s]').length`, quoted(kind))); got != 1 {
			t.Errorf("the timeline has %d %s, want 1", got, kind)
		}
	}
	if got := b.text(`#timeline tr[data-kind="TimerCreated"]`); !strings.Contains(got, "(in 1h00m)") || !strings.Contains(got, "running") {
		t.Errorf("the timer's row shows %q; want when it is due and that it runs", got)
	}
	if got := b.text("#custom-status"); got != "waiting for a decision on laptop" {
		t.Errorf("custom status %q", got)
	}
	for _, action := range []string{"raise", "cancel", "terminate", "purge"} {
		if !eval[bool](b, fmt.Sprintf(`document.querySelector("#action-%s").disabled`, action)) {
			t.Errorf("with the read-only token, %s is enabled", action)
		}
	}

	// A query, which the read-only token may run: no decision yet; one it
	// does not handle is refused, naming those it does.
	b.do("query Decision",
		chromedp.SendKeys(chromedp.CSS("#query-name"), "Decision"),
		chromedp.Click(chromedp.CSS(`#query-form button[type="submit"]`)))
	b.waitFor("the answer", `document.querySelector("#query-answer").className === "ok"`)
	if got := b.text("#query-answer"); got != "null" {
		t.Errorf("the query's answer shows %q, want null", got)
	}
	b.do("query Progress",
		chromedp.SetValue(chromedp.CSS("#query-name"), "Progress"),
		chromedp.Click(chromedp.CSS(`#query-form button[type="submit"]`)))
	b.waitFor("the refusal", `document.querySelector("#query-answer").className === "error"`)
	if got := b.text("#query-answer"); got != `query refused: no such query: "laptop" handles no query "Progress"; it handles "Decision"` {
		t.Errorf("the refused query shows %q", got)
	}

	// The admin token: raise the decision the approval waits for.
	b.do("forget the read-only token", chromedp.Click(chromedp.CSS("#forget")))
	b.giveToken(adminToken)
	b.waitFor("the actions enabled", loaded+` && !document.querySelector("#action-raise").disabled`)
	if !eval[bool](b, `document.querySelector("#action-purge").disabled`) {
		t.Error("purge is enabled for a running instance")
	}
	b.do("raise Approval",
		chromedp.Click(chromedp.CSS("#action-raise")),
		chromedp.SendKeys(chromedp.CSS("#raise-name"), "Approval"),
		chromedp.SetValue(chromedp.CSS("#raise-data"), `{"approved": true, "by": "the dashboard"}`),
		chromedp.Click(chromedp.CSS(`#raise-form button[type="submit"]`)))
	b.waitFor("the approval completed", `document.querySelector('#instance-status [data-status="Completed"]') !== null`)
	if got := b.text("#result"); got != `"laptop approved by the dashboard"` {
		t.Errorf("the result shows %q", got)
	}
	if got := b.text(`#timeline tr[data-kind="ExternalEvent"]`); !strings.Contains(got, `"by":"the dashboard"`) {
		t.Errorf("the event's row shows %q", got)
	}
	if inst := h.wait(t, "laptop"); inst.Status != engine.StatusCompleted || string(inst.Result) != `"laptop approved by the dashboard"` {
		t.Errorf("laptop: %s %s", inst.Status, inst.Result)
	}
	if !eval[bool](b, `document.querySelector("#action-raise").disabled`) {
		t.Error("raise is enabled for a finished instance")
	}
	// The finished instance answers its query, from a replay.
	b.do("query Decision once decided",
		chromedp.SetValue(chromedp.CSS("#query-name"), "Decision"),
		chromedp.Click(chromedp.CSS(`#query-form button[type="submit"]`)))
	b.waitFor("the decision", `document.querySelector("#query-answer").textContent.includes("the dashboard")`)
	if got := b.text("#query-answer"); !strings.Contains(got, `"approved": true`) {
		t.Errorf("the finished instance's query shows %q", got)
	}
	png := b.screenshot()

	// Cancel the other.
	b.open("#/instances/desk", `#instance-status [data-status="Running"]`)
	b.do("cancel desk",
		chromedp.Click(chromedp.CSS("#action-cancel")),
		chromedp.SendKeys(chromedp.CSS("#cancel-reason"), "bought one already"),
		chromedp.Click(chromedp.CSS(`#cancel-form button[type="submit"]`)))
	b.waitFor("desk canceled", `document.querySelector('#instance-status [data-status="Canceled"]') !== null`)
	if got := b.text(`#timeline tr[data-kind="OrchestrationCancelRequested"]`); !strings.Contains(got, "reason: bought one already") {
		t.Errorf("the cancellation's row shows %q", got)
	}
	if inst := h.wait(t, "desk"); inst.Status != engine.StatusCanceled {
		t.Errorf("desk: %s", inst.Status)
	}

	// A failure, highlighted.
	b.open("#/instances/flaky", "#failure")
	if got := b.text("#failure"); !strings.Contains(got, "all 2 attempts failed") {
		t.Errorf("the failure shows %q", got)
	}
	if got := eval[int](b, `document.querySelectorAll('#timeline tr.failed[data-kind="ActivityFailed"]').length`); got != 2 {
		t.Errorf("%d failed activities marked, want 2", got)
	}

	// The Flow replays on its own module, and diverges on the second
	// version, at the event the timeline then marks.
	b.open("#/instances/flow", `#replay-module option[value=`+quoted(v2.Hash)+`]`)
	b.do("replay flow on its module", chromedp.Click(chromedp.CSS(`#replay-form button[type="submit"]`)))
	b.waitFor("the replay on its module", `document.querySelector("#replay-outcome").className === "ok"`)
	if got := b.text("#replay-outcome"); !strings.HasPrefix(got, "reproduces the") {
		t.Errorf("the replay on its module: %q", got)
	}
	b.do("replay flow on v2", chromedp.SetValue(chromedp.CSS("#replay-module"), v2.Hash), chromedp.Click(chromedp.CSS(`#replay-form button[type="submit"]`)))
	b.waitFor("the replay on v2", `document.querySelector("#replay-outcome").className === "error"`)
	outcome := b.text("#replay-outcome")
	report, err := h.Replay(ctx, "flow", api.ReplayRequest{Module: v2.Hash})
	if err != nil || report.Divergence == nil {
		t.Fatalf("replay of flow on v2: %+v, %v; want a divergence", report, err)
	}
	if want := fmt.Sprintf("diverges at event %d: %s", report.Divergence.EventID, report.Divergence.Message); outcome != want {
		t.Errorf("the replay on v2 shows %q, want %q", outcome, want)
	}
	if got := eval[string](b, `[...document.querySelectorAll("#timeline tr.blamed")].map(r => r.dataset.event).join(",")`); got != strconv.FormatInt(report.Divergence.EventID, 10) {
		t.Errorf("the timeline marks events %q, want %d", got, report.Divergence.EventID)
	}

	// Children.
	b.open("#/instances/order-1", `#children li[data-id="order-1~1:2"]`)
	if got := b.text("#children"); !strings.Contains(got, "order-1~1:3") || !strings.Contains(got, "Audit") {
		t.Errorf("the children show %q", got)
	}

	// Modules and the queue.
	b.open("#/modules", "#modules tbody tr[data-hash]")
	if got := eval[int](b, `document.querySelectorAll("#modules tbody tr[data-hash]").length`); got != 6 {
		t.Errorf("%d modules shown, want 6", got)
	}
	if got := b.text(`#modules tr[data-hash] td:nth-child(3)`); got == "" {
		t.Error("the newest module shows no orchestration")
	}
	q, err := h.Queue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.open("#/queue", "#queue-timers")
	if got := b.text("#queue-timers .big"); got != strconv.Itoa(q.Timers) {
		t.Errorf("the queue shows %s timers; the host has %d", got, q.Timers)
	}

	dir := t.TempDir()
	if *update {
		dir = filepath.Join(guestbuild.Root(), "docs")
	}
	if err := os.WriteFile(filepath.Join(dir, "dashboard.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// screenshot takes a PNG of the viewport.
func (b *browser) screenshot() []byte {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	return png
}
