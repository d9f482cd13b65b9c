package durabox

import (
	"bytes"
	"log/slog"
	"testing"
)

// TestLogLines: each record is one line, its level first as the host reads
// it (a syslog priority in angle brackets), then its message and
// attributes, with no time and no level= of slog's own.
func TestLogLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want string
	}{
		{"error", func(l *slog.Logger) { l.Error("charge failed", "order", 42) }, "<3>charge failed order=42\n"},
		{"above error", func(l *slog.Logger) { l.Log(t.Context(), slog.LevelError+4, "down") }, "<3>down\n"},
		{"warning", func(l *slog.Logger) { l.Warn("slow", "took", "2s") }, "<4>slow took=2s\n"},
		{"info", func(l *slog.Logger) { l.Info("charged") }, "<6>charged\n"},
		{"debug", func(l *slog.Logger) { l.Debug("detail", "k", "a b") }, "<7>detail k=\"a b\"\n"},
		{"a message of two lines", func(l *slog.Logger) { l.Info("one\ntwo") }, "<6>\"one\\ntwo\"\n"},
		{"attributes and a group", func(l *slog.Logger) { l.With("order", 7).WithGroup("card").Warn("declined", "last4", "4242") },
			"<4>declined order=7 card.last4=4242\n"},
		{"a group's own time and level", func(l *slog.Logger) { l.WithGroup("g").Info("m", "time", 1, "level", 2) }, "<6>m g.time=1 g.level=2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tt.log(slog.New(newLogHandler(&out)))
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}
