package host_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/server"
)

// TestDashboardShowsTaskQueues opens, in Chromium, the queue page and an
// instance page of a host whose order waits on a task queue no worker
// polls: the queue's tile says so, and the instance page lists the call
// it waits on.
func TestDashboardShowsTaskQueues(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/fulfil")
	handler, err := server.New(h.Host, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	h.startAt(t, "Fulfil", `{"id": "o-9", "customer": "c-1", "cents": 5}`, "o-9")
	h.awaitEvents(t, "o-9", 2)

	b.do("open the dashboard", chromedp.Navigate(srv.URL+"/"))
	b.open("#/queue", "#queue-task-queue-orders")
	if got := b.text("#queue-task-queue-orders .big"); got != "1" {
		t.Errorf("the orders tile shows %q waiting; want 1", got)
	}
	if got := b.text("#queue-task-queue-orders"); !strings.Contains(got, "no worker has polled it") {
		t.Errorf("the orders tile says %q; want it to say no worker polled it", got)
	}
	b.open("#/instances/o-9", "#activities")
	if got := b.text("#activities"); !strings.Contains(got, "RecordOrder on task queue orders: waiting: no worker has polled its queue") {
		t.Errorf("the instance page's activities say %q; want RecordOrder waiting on orders, unpolled", got)
	}
}
