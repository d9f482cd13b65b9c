package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
)

// TestCompletionFromOutside runs, in the module, an activity that hands
// its completion token to a URL and returns durabox.ErrResultPending, on
// a host whose clock the test moves: a completion by the token completes
// the call, once (a second is refused, saying so); a token used after the
// attempt's deadline is refused, and the attempt fails as timed out.
func TestCompletionFromOutside(t *testing.T) {
	t.Parallel()
	tokens := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tokens <- r.URL.RawQuery }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	var ahead atomic.Int64
	logs := &records{}
	h := startHost(t, host.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }, HTTPAllowList: []string{u.Host}, Logger: slog.New(logs)})
	h.deploy(t, "host/testdata/guests/heartbeats")
	input, _ := json.Marshal(srv.URL)
	token := func() string {
		t.Helper()
		select {
		case tok := <-tokens:
			return tok
		case <-time.After(time.Minute):
			t.Fatal("the activity posted no completion token within a minute")
		}
		return ""
	}
	ctx := context.Background()

	h.startAt(t, "Approval", string(input), "a-1")
	first := token()
	logs.wait(t, "activity waits to be completed from outside instance=a-1")
	if err := h.CompleteTask(ctx, first, json.RawMessage(`"approved"`)); err != nil {
		t.Fatal(err)
	}
	if inst := h.wait(t, "a-1"); inst.Status != engine.StatusCompleted || string(inst.Result) != `"approved"` {
		t.Fatalf("a-1 is %s with %s; want Completed with the result from outside", inst.Status, inst.Result)
	}
	if err := h.CompleteTask(ctx, first, json.RawMessage(`"again"`)); !errors.Is(err, api.ErrTaskLost) || !strings.Contains(err.Error(), "no such task waits") {
		t.Fatalf("a second completion: %v; want ErrTaskLost saying no such task waits", err)
	}
	if err := h.CompleteTask(ctx, "dbxc.bad", nil); !errors.Is(err, api.ErrBadInput) {
		t.Fatalf("a completion with a bad token: %v; want ErrBadInput", err)
	}

	h.startAt(t, "Approval", string(input), "a-2")
	late := token()
	logs.wait(t, "activity waits to be completed from outside instance=a-2")
	ahead.Store(int64(2 * time.Hour))
	if err := h.FailTask(ctx, late, engine.Failure{Message: "declined"}); !errors.Is(err, api.ErrTaskLost) || !strings.Contains(err.Error(), "deadline passed") {
		t.Fatalf("a failure past the deadline: %v; want ErrTaskLost saying the deadline passed", err)
	}
	inst := h.wait(t, "a-2")
	if inst.Status != engine.StatusFailed || !strings.Contains(inst.Failure.Message, "nobody did by its deadline") {
		t.Fatalf("a-2 is %s with %+v; want Failed, the activity timed out waiting to be completed", inst.Status, inst.Failure)
	}
}
