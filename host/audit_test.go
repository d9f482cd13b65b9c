package host_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// TestStartsAuditedOnce starts instances through the API every way a
// start can go: each start leaves one audit record, at the host's clock,
// whether its record committed with the instance (a start that created
// it) or after the answer (one refused, or one with an event that only
// raised it at the instance there).
func TestStartsAuditedOnce(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h, c, _ := servedOnClock(t, newFrozenClock(at), "examples/wasm/hello")
	ctx := context.Background()
	var chosen string
	for _, s := range []struct {
		req    api.StartRequest
		status int
	}{
		{api.StartRequest{Name: "Greeting", ID: "a"}, 201},
		{api.StartRequest{Name: "Greeting"}, 201},
		{api.StartRequest{Name: "Greeting", ID: "a"}, 409},
		{api.StartRequest{Name: "Nothing", ID: "n"}, 422},
		{api.StartRequest{Name: "Greeting", ID: "b", Raise: &api.RaiseRequest{Name: "Go"}}, 201},
		{api.StartRequest{Name: "Greeting", ID: "b", Raise: &api.RaiseRequest{Name: "Go"}}, 200},
	} {
		r, err := c.StartWith(ctx, s.req)
		status := http.StatusCreated
		if r.Started != nil && !*r.Started {
			status = http.StatusOK
		}
		if (err == nil && status != s.status) || (err != nil && !isStatus(err, s.status)) {
			t.Fatalf("start %+v: %d, %v; want %d", s.req, status, err, s.status)
		}
		if s.req.ID == "" {
			chosen = r.ID
		}
	}
	page, err := h.Audit(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(page.Records) - 1; i >= 0; i-- {
		r := page.Records[i]
		got = append(got, fmt.Sprintf("%s %s %d %s: %s", r.Action, r.Target, r.Status, r.Outcome, r.Detail))
		if !r.Time.Equal(at) || r.Token != "anonymous" || r.Role != "admin" {
			t.Errorf("record %d: at %s by %s (%s); want at the host's clock, %s, by anonymous (admin)", r.ID, r.Time, r.Token, r.Role, at)
		}
	}
	want := []string{
		`start a 201 ok: orchestration "Greeting"`,
		`start ` + chosen + ` 201 ok: orchestration "Greeting"`,
		`start a 409 refused: instance already exists: "a"`,
		`start n 422 refused: unknown orchestration "Nothing": no deployed module registers it; deploy one with ` + "`durabox deploy FILE.wasm`",
		`start b 201 ok: orchestration "Greeting" with event "Go"`,
		`start b 200 ok: orchestration "Greeting" with event "Go"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the audit log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
