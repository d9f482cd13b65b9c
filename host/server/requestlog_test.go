package server

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRequestLevel: a request's line is at debug level, unless the request
// failed (5xx) or was slow, not counting a long poll's wait; a 503 for a
// request whose client left is not a failure.
func TestRequestLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, target string
		status               int
		took                 time.Duration
		want                 slog.Level
	}{
		{"a start", "POST", "/v1/instances", 201, time.Millisecond, slog.LevelDebug},
		{"a read", "GET", "/v1/instances/a", 200, time.Millisecond, slog.LevelDebug},
		{"a refusal", "POST", "/v1/instances", 400, time.Millisecond, slog.LevelDebug},
		{"a failure", "POST", "/v1/instances", 500, time.Millisecond, slog.LevelWarn},
		{"not ready", "GET", "/readyz", 503, time.Millisecond, slog.LevelWarn},
		{"a slow deploy", "POST", "/v1/modules", 201, slowRequest + time.Millisecond, slog.LevelWarn},
		{"a long poll", "GET", "/v1/instances/a?wait=30s", 200, 30 * time.Second, slog.LevelDebug},
		{"a body that stalls", "POST", "/v1/instances", 400, 30 * time.Second, slog.LevelDebug},
		{"a poll whose worker left", "POST", "/v1/tasks/poll?wait=30s", 503, 12 * time.Second, slog.LevelDebug},
		{"a failure whose client left", "POST", "/v1/instances", 500, time.Millisecond, slog.LevelWarn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			if strings.Contains(tt.name, "left") {
				ctx, cancel := context.WithCancel(r.Context())
				cancel()
				r = r.WithContext(ctx)
			}
			if got := requestLevel(r, tt.status, tt.took); got != tt.want {
				t.Errorf("level %s; want %s", got, tt.want)
			}
		})
	}
}
