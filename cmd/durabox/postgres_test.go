package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/pgtest"
)

// TestSeveralHostsOnPostgres runs three hosts on one PostgreSQL database:
// a module deployed on one runs on all, an instance started on one can be
// waited for on another, and when a host is killed the others finish its
// work, each instance with a history that has no gap and no duplicate. (A
// host whose turn outlives the short lease, compiling the module on a
// loaded machine, has its late commit refused and logs it: that is the
// fencing, not a failure.)
func TestSeveralHostsOnPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	dir := t.TempDir()
	var hosts []*serveProcess
	for _, id := range []string{"a", "b", "c"} {
		hosts = append(hosts, startServerAt(t, url, "127.0.0.1:0", "--host-id", id, "--lease", "2s", "--cache-dir", filepath.Join(dir, id)))
	}
	if out := hosts[0].output(); !strings.Contains(out, "(db "+strings.SplitN(url, "?", 2)[0]) {
		t.Fatalf("serve did not name the database it serves:\n%s", out)
	}
	deployExample(t, hosts[0].client(), "retry")
	ctx := context.Background()
	var ids []string
	for i := range 9 {
		id, err := hosts[i%3].client().Start(ctx, api.StartRequest{Name: "Retry", Input: json.RawMessage(`{"failures": 1, "delay": "200ms", "workMillis": 100}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// A client waits on another host than the one that started it.
	waitCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	inst, err := hosts[1].client().Wait(waitCtx, ids[0])
	if err != nil || inst.Status != engine.StatusCompleted {
		t.Fatalf("Wait on host b for %s: %+v, %v; want it Completed", ids[0], inst, err)
	}
	hosts[2].kill(t)
	for _, id := range ids {
		events := waitFor(t, hosts[0].client(), id, "its end", func(e []engine.Event) bool {
			return len(e) > 0 && e[len(e)-1].Kind == engine.OrchestrationCompleted
		})
		checkHistory(t, events)
		if got := kindsOf(events); got != "OrchestrationStarted ActivityScheduled ActivityFailed TimerCreated TimerFired ActivityScheduled ActivityCompleted OrchestrationCompleted" {
			t.Fatalf("history of %s: %s", id, got)
		}
	}
	// What an operator looks at works on PostgreSQL too: the health checks,
	// the dashboard, the metrics the store reports its commits to, the
	// list and the queue.
	checkObservable(t, "http://"+hosts[1].addr)
	page, err := hosts[1].client().List(ctx, client.ListRequest{Limit: 5})
	if err != nil || len(page.Instances) != 5 || page.Next == "" {
		t.Fatalf("List: %d instances, next %q, %v; want a page of 5 and a cursor", len(page.Instances), page.Next, err)
	}
	if q, err := hosts[0].client().Queue(ctx); err != nil || q.Ready != 0 || q.Timers != 0 {
		t.Fatalf("Queue once every instance finished: %+v, %v; want nothing waiting", q, err)
	}
}

// TestQueriesAcrossHostsOnPostgres: two hosts share a database, and each
// keeps a wasm instance of the Counter it answered a query on. After
// another step, which one of them ran (or each ran a turn of), the other's
// copy is behind the store; every host still answers from the committed
// history, never from the copy it kept.
func TestQueriesAcrossHostsOnPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	dir := t.TempDir()
	a := startServerAt(t, url, "127.0.0.1:0", "--host-id", "a", "--cache-dir", filepath.Join(dir, "a"))
	b := startServerAt(t, url, "127.0.0.1:0", "--host-id", "b", "--cache-dir", filepath.Join(dir, "b"))
	wasm, err := guestbuild.Wasm("host/testdata/guests/queries")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := a.client().Deploy(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	id, err := a.client().Start(ctx, api.StartRequest{Name: "Counter", Input: json.RawMessage(`3`)})
	if err != nil {
		t.Fatal(err)
	}
	for step, events := range []int{6, 10} {
		if err := a.client().Raise(ctx, id, api.RaiseRequest{Name: "Next"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, a.client(), id, "the step", func(e []engine.Event) bool { return len(e) == events })
		for _, s := range []*serveProcess{a, b} {
			got, err := s.client().Query(ctx, id, "Count", nil)
			if err != nil || string(got) != strconv.Itoa(step+1) {
				t.Fatalf("after step %d, host %s answers Count %s, %v; want %d", step+1, s.addr, got, err, step+1)
			}
		}
	}
}
