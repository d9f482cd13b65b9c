package oddstore

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/logbuf"
	"github.com/durabox/durabox/store"
)

// Run builds the odd database on b's store and checks a host on it, as the
// package's doc says. It runs real modules, for seconds: under -short
// (make check) it skips.
func Run(t *testing.T, b Backend) {
	if testing.Short() {
		t.Skip("oddstore: the odd database runs a real host for seconds; go test without -short runs it")
	}
	cacheDir := t.TempDir()
	odds := build(t, b, cacheDir)

	log := &logbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(log, nil))
	st := &counting{Store: b.Open(t)}
	defer st.Close()
	h, err := host.New(st, host.Options{CacheDir: cacheDir, Logger: logger, MaxPayload: maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	handler, err := server.New(h, server.Options{Logger: logger, MaxPayload: maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	defer func() {
		if t.Failed() {
			t.Logf("the host's log:\n%s", log)
		}
	}()

	c := &checker{t: t, url: srv.URL, deadline: time.Now().Add(time.Minute)}
	c.ready()
	for _, o := range odds {
		if o.want.IsTerminal() {
			c.reaches(o.id, o.want, o.reason)
		}
	}
	c.reaches(oddID, engine.StatusCompleted, "")
	c.servesAll(odds)
	c.runsANewInstance()
	c.settles(st)
	for _, o := range odds {
		if o.want != "" && !o.want.IsTerminal() {
			c.reaches(o.id, o.want, "")
		}
	}
	if status, body := c.get("/metrics"); status != http.StatusOK {
		t.Errorf("GET /metrics: %d %.300s", status, body)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Errorf("Run did not return within a minute of its stop")
	}
	checkFinds(t, b.Check(t), odds)
}

// checkFinds fails the test unless the check c names each odd instance
// whose rows break the store's invariants.
func checkFinds(t *testing.T, c *store.Check, odds []odd) {
	for _, o := range odds {
		named := func(p string) bool { return strings.Contains(p, "instance "+strconv.Quote(o.damages)) }
		if o.damages != "" && !slices.ContainsFunc(c.Problems, named) {
			t.Errorf("the check of the odd database does not name instance %q, which %s damaged; it found:\n%s", o.damages, o.id, strings.Join(c.Problems, "\n"))
		}
	}
}

// checker asks a host on the odd database, over HTTP.
type checker struct {
	t   *testing.T
	url string
	// deadline is when the host must have done what reaches waits for.
	deadline time.Time
}

// get returns the status and the body of GET path.
func (c *checker) get(path string) (int, []byte) {
	c.t.Helper()
	resp, err := http.Get(c.url + path)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, body
}

// getJSON gets path, which must answer 200 with JSON, into v.
func (c *checker) getJSON(path string, v any) bool {
	c.t.Helper()
	status, body := c.get(path)
	if status != http.StatusOK || !json.Valid(body) || !utf8.Valid(body) {
		c.t.Errorf("GET %s: %d %.300s; want 200 and JSON in UTF-8", path, status, body)
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		c.t.Errorf("GET %s: %v", path, err)
		return false
	}
	return true
}

// ready waits until the host is ready.
func (c *checker) ready() {
	c.t.Helper()
	for ; ; time.Sleep(10 * time.Millisecond) {
		status, body := c.get("/readyz")
		if status == http.StatusOK {
			return
		}
		if time.Now().After(c.deadline) {
			c.t.Fatalf("GET /readyz: %d %s, long after the host started", status, body)
		}
	}
}

// reaches waits until instance id is want, with a failure that holds
// reason.
func (c *checker) reaches(id string, want engine.Status, reason string) {
	c.t.Helper()
	path := "/v1/instances/" + url.PathEscape(id)
	var inst api.InstanceDetails
	for ; ; time.Sleep(10 * time.Millisecond) {
		if !c.getJSON(path, &inst) {
			return
		}
		if inst.Status == want || time.Now().After(c.deadline) {
			break
		}
	}
	message := ""
	if inst.Failure != nil {
		message = inst.Failure.Message
	}
	if inst.Status != want || !strings.Contains(message, reason) {
		c.t.Errorf("%s is %s, failure %q; want %s with a reason that holds %q", id, inst.Status, message, want, reason)
	}
}

// servesAll lists every instance, and reads the status and the history of
// each: all of them answer 200 with JSON, and every odd instance still
// there is among them.
func (c *checker) servesAll(odds []odd) {
	c.t.Helper()
	unreadable := map[string]bool{}
	for _, o := range odds {
		unreadable[o.id] = o.unreadable
	}
	listed := map[string]bool{}
	cursor := ""
	for {
		var page api.InstancesResponse
		if !c.getJSON("/v1/instances?limit=7&cursor="+url.QueryEscape(cursor), &page) {
			return
		}
		for _, inst := range page.Instances {
			listed[inst.ID] = true
			var details api.InstanceDetails
			c.getJSON("/v1/instances/"+url.PathEscape(inst.ID), &details)
			c.history(inst.ID, unreadable[inst.ID])
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	for _, o := range odds {
		if !o.gone && !listed[o.id] {
			c.t.Errorf("%s is not listed", o.id)
		}
	}
	if !listed[oddID] {
		c.t.Errorf("%q is not listed", oddID)
	}
}

// history reads the history of instance id: JSON, with 200, or, when
// it is unreadable, an error that says a row is corrupt.
func (c *checker) history(id string, unreadable bool) {
	c.t.Helper()
	path := "/v1/instances/" + url.PathEscape(id) + "/history"
	if !unreadable {
		var history api.HistoryResponse
		c.getJSON(path, &history)
		return
	}
	status, body := c.get(path)
	var refusal api.ErrorResponse
	if status == http.StatusOK || json.Unmarshal(body, &refusal) != nil || !strings.Contains(refusal.Error, "corrupt row") {
		c.t.Errorf("GET %s: %d %.300s; want an error saying a row is corrupt", path, status, body)
	}
}

// runsANewInstance starts a Greeting and waits for it to complete.
func (c *checker) runsANewInstance() {
	c.t.Helper()
	resp, err := http.Post(c.url+"/v1/instances", "application/json", strings.NewReader(`{"name": "Greeting", "input": "new", "id": "new"}`))
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		c.t.Fatalf("POST /v1/instances: %d", resp.StatusCode)
	}
	c.deadline = time.Now().Add(time.Minute)
	c.reaches("new", engine.StatusCompleted, "")
}

// settles checks that the host, with nothing left to do, asks the store
// for work no more than a few times a second: a fetcher that spins on
// something it cannot take asks it thousands of times.
func (c *checker) settles(st *counting) {
	c.t.Helper()
	const window, most = 2 * time.Second, 20
	before := st.fetches.Load()
	time.Sleep(window)
	if n := st.fetches.Load() - before; n > most {
		c.t.Errorf("the host asked the store for work %d times in %s with nothing to do; want %d at most", n, window, most)
	}
}

// counting is a store that counts the host's asks for work.
type counting struct {
	store.Store
	fetches atomic.Int64
}

func (s *counting) LockNextInstances(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.WorkItem, error) {
	s.fetches.Add(1)
	return s.Store.LockNextInstances(ctx, now, lease, max, skip)
}

func (s *counting) LockNextActivities(ctx context.Context, now time.Time, lease time.Duration, max int, skip []string) ([]*store.ActivityWork, error) {
	s.fetches.Add(1)
	return s.Store.LockNextActivities(ctx, now, lease, max, skip)
}
