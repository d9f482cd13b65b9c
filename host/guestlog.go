package host

import (
	"bytes"
	"log/slog"
	"sync"
)

// guestLog turns what a guest prints into log records, a line each, tagged
// with where it came from. While its orchestration replays it writes
// nothing: those lines were logged when the steps first ran.
type guestLog struct {
	logger *slog.Logger

	mu        sync.Mutex
	replaying bool
	partial   []byte
}

func newGuestLog(logger *slog.Logger, args ...any) *guestLog {
	return &guestLog{logger: logger.With(args...)}
}

func (g *guestLog) setReplaying(r bool) {
	g.mu.Lock()
	g.replaying = r
	g.mu.Unlock()
}

func (g *guestLog) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.replaying {
		return len(p), nil
	}
	g.partial = append(g.partial, p...)
	for {
		i := bytes.IndexByte(g.partial, '\n')
		if i < 0 {
			break
		}
		g.logger.Info("guest: " + string(g.partial[:i]))
		g.partial = g.partial[i+1:]
	}
	return len(p), nil
}
