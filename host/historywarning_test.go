package host

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
)

// TestHistoryWarning: an instance whose history grows past
// Options.HistoryWarning runs on (nothing is refused); the host logs it
// once, when the turn that takes it past commits, and GET
// /v1/instances/{id} warns while it is past. At the warning length itself,
// nothing is said.
func TestHistoryWarning(t *testing.T) {
	t.Parallel()
	// WaitsForGo calls an activity, then waits: n events of history.
	run := func(opts Options) (*Host, int) {
		h := conformanceHost(t, opts)
		startEach(t, h, `null`, "WaitsForGo")
		drive(t, h, conformanceNow, false)
		events, err := h.History(context.Background(), "WaitsForGo")
		if err != nil {
			t.Fatal(err)
		}
		return h, len(events)
	}
	_, n := run(Options{})
	for _, tt := range []struct {
		name    string
		warning int
		warned  bool
	}{{"past the warning", n - 1, true}, {"at the warning", n, false}} {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			h, _ := run(Options{HistoryWarning: tt.warning, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if got, want := strings.Count(log.String(), "history past the warning length"), map[bool]int{true: 1}[tt.warned]; got != want {
				t.Errorf("with %d events and the warning at %d the host logged the warning %d times, want %d:\n%s", n, tt.warning, got, want, log.String())
			}
			handler, err := server.New(h, server.Options{Metrics: h.Metrics()})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/v1/instances/WaitsForGo", nil))
			var d api.InstanceDetails
			if err := json.Unmarshal(rec.Body.Bytes(), &d); rec.Code != http.StatusOK || err != nil {
				t.Fatalf("GET: %d %s", rec.Code, rec.Body)
			}
			if got := len(d.Warnings) == 1 && strings.Contains(d.Warnings[0], "past the warning at"); got != tt.warned || len(d.Warnings) > 1 {
				t.Fatalf("with %d events and the warning at %d: warnings %q", n, tt.warning, d.Warnings)
			}
		})
	}
}
