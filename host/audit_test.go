package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// TestChangesAuditedOnce starts instances through the API every way a
// start can go, and raises events at them, cancels and terminates them:
// each request leaves one audit record, at the host's clock, whether its
// record committed with the change (a start that created its instance, a
// raise, a cancel, a terminate) or after the answer (a request refused,
// or a start with an event that only raised it at the instance there).
func TestChangesAuditedOnce(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	h, c, _ := servedOnClock(t, newFrozenClock(at), "examples/wasm/approval")
	ctx := context.Background()
	var chosen string
	for _, s := range []struct {
		req    api.StartRequest
		status int
	}{
		{api.StartRequest{Name: "Approval", Input: json.RawMessage(`{"item":"laptop","timeout":"1h"}`), ID: "a"}, 201},
		{api.StartRequest{Name: "Approval", Input: json.RawMessage(`{"item":"laptop","timeout":"1h"}`)}, 201},
		{api.StartRequest{Name: "Approval", Input: json.RawMessage(`{"item":"laptop","timeout":"1h"}`), ID: "a"}, 409},
		{api.StartRequest{Name: "Nothing", ID: "n"}, 422},
		{api.StartRequest{Name: "Approval", Input: json.RawMessage(`{"item":"laptop","timeout":"1h"}`), ID: "b", Raise: &api.RaiseRequest{Name: "Go"}}, 201},
		{api.StartRequest{Name: "Approval", Input: json.RawMessage(`{"item":"laptop","timeout":"1h"}`), ID: "b", Raise: &api.RaiseRequest{Name: "Go"}}, 200},
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
	for _, err := range []error{
		c.Raise(ctx, "a", api.RaiseRequest{Name: "Note"}),
		c.Cancel(ctx, "b", "not wanted"),
		c.Terminate(ctx, chosen, "stuck"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Raise(ctx, "absent", api.RaiseRequest{Name: "Note"}); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("a raise at an instance that is not there: %v; want 404", err)
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
		`start a 201 ok: orchestration "Approval"`,
		`start ` + chosen + ` 201 ok: orchestration "Approval"`,
		`start a 409 refused: instance already exists: "a"`,
		`start n 422 refused: unknown orchestration "Nothing": no deployed module registers it; deploy one with ` + "`durabox deploy FILE.wasm`",
		`start b 201 ok: orchestration "Approval" with event "Go"`,
		`start b 200 ok: orchestration "Approval" with event "Go"`,
		`raise a 202 ok: event "Note"`,
		`cancel b 202 ok: reason "not wanted"`,
		`terminate ` + chosen + ` 202 ok: reason "stuck"`,
		`raise absent 404 refused: instance not found: "absent"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the audit log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
