package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/server"
)

// TestPayloadLimits runs a host whose payload limit is 1 MiB. An input or
// an event's data past it is refused at the edge, by Start and Raise and
// over HTTP with 413, naming the limit and where it is set; a guest that
// makes a payload past it (a custom status, a result, an activity's input
// or result) fails what made it, saying so; everything within it passes.
func TestPayloadLimits(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	h := startHost(t, host.Options{MaxPayload: limit})
	h.deploy(t, "host/testdata/guests/sizes")
	over := strconv.Itoa(limit + 1)
	const where = "over the limit of 1 MiB a payload (Options.MaxPayload; durabox serve --max-payload-mib)"

	t.Run("guests", func(t *testing.T) {
		// Over the limit by a byte: and by two more, JSON's quotes, in a
		// JSON string.
		tests := []struct {
			orchestration string
			wantFailure   string
		}{
			{"Status", "orchestration crashed applying event 1: its command 1, a custom status, carries 1048577 bytes, " + where},
			{"Result", "orchestration crashed applying event 1: its command 1, the orchestration's result, carries 1048579 bytes, " + where},
			{"ActivityInput", "orchestration crashed applying event 1: its command 1, an activity's input, carries 1048579 bytes, " + where},
			{"ActivityResult", `activity "Make" failed: activity "Make" returned a result of 1048579 bytes, ` + where},
		}
		for _, tt := range tests {
			t.Run(tt.orchestration, func(t *testing.T) {
				inst := h.run(t, tt.orchestration, over)
				if inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != tt.wantFailure {
					t.Errorf("status %s failure %+v\nwant failure %q", inst.Status, inst.Failure, tt.wantFailure)
				}
				if len(inst.CustomStatus) > limit {
					t.Errorf("the instance kept a custom status of %d bytes", len(inst.CustomStatus))
				}
				within := h.run(t, tt.orchestration, strconv.Itoa(limit-1024))
				if within.Status != engine.StatusCompleted {
					t.Errorf("within the limit: status %s failure %+v", within.Status, within.Failure)
				}
			})
		}
	})

	big := json.RawMessage(`"` + strings.Repeat("x", limit) + `"`)
	t.Run("Start", func(t *testing.T) {
		_, err := h.Start(context.Background(), "Status", big, "")
		want := "host: request too large: the input is 1048578 bytes, " + where
		if !errors.Is(err, api.ErrTooLarge) || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	})
	t.Run("Raise", func(t *testing.T) {
		id := h.start(t, "Status", "1")
		err := h.Raise(context.Background(), id, "e", big, false)
		want := "host: request too large: the event's data is 1048578 bytes, " + where
		if !errors.Is(err, api.ErrTooLarge) || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	})
	t.Run("HTTP", func(t *testing.T) {
		handler, err := server.New(h.Host, server.Options{Metrics: h.Host.Metrics(), MaxPayload: limit})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			body []byte
			want string
		}{
			{"a payload past the limit", []byte(`{"name":"Status","input":` + string(big) + `}`),
				`{"error":"request too large: the input is 1048578 bytes, ` + where + `"}`},
			{"a body past the limit and 1 MiB", []byte(`{"name":"Status","input":"` + strings.Repeat("x", 2*limit) + `"}`),
				`{"error":"request too large: the request body is larger than the limit of 2 MiB (the limit of 1 MiB a payload (Options.MaxPayload; durabox serve --max-payload-mib), and 1 MiB for the rest of the request)"}`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "http://localhost/v1/instances", bytes.NewReader(tt.body))
				req.Header.Set("Content-Type", "application/json")
				handler.ServeHTTP(rec, req)
				if got := strings.TrimSpace(rec.Body.String()); rec.Code != http.StatusRequestEntityTooLarge || got != tt.want {
					t.Errorf("got %d %s\nwant 413 %s", rec.Code, got, tt.want)
				}
			})
		}
	})
}
