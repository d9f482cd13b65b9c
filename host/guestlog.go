package host

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// What the host keeps of a guest's output, whatever the guest writes: a
// line is cut at maxLogLine bytes, and a guest's log takes logLinesPerSecond
// lines a second, in bursts of up to logBurst; past that, lines are dropped
// and counted. So a guest that floods its output costs the host a line's
// buffer and the lines it is allowed, never what it wrote.
const (
	maxLogLine        = 16 << 10
	logLinesPerSecond = 100
	logBurst          = 1000
)

// guestLog turns what a guest prints into log records, a line each, at the
// level the line's prefix names (lineLevel), tagged with where it came from
// (an orchestration's instance and execution; an activity's module,
// instance, execution, name, schedule id and attempt), and says in that
// log when it cut a line or dropped lines. While its orchestration replays
// it writes nothing: those lines were logged when the steps first ran.
type guestLog struct {
	// base is the log with the tags of the guest.
	base  *slog.Logger
	clock func() time.Time
	limit *rate.Limiter

	mu sync.Mutex
	// tags are those of the activity attempt the guest runs (see tag);
	// logger is base with them, made when the attempt first logs a line
	// (nil until then): a handler's WithAttrs formats the tags, which an
	// attempt that prints nothing, most of them, need not pay for.
	tags      []any
	logger    *slog.Logger
	replaying bool
	lines     lineSplitter
	// dropped and droppedBytes count the lines dropped over the rate
	// limit since the log last said so.
	dropped, droppedBytes int
}

func newGuestLog(logger *slog.Logger, clock func() time.Time, args ...any) *guestLog {
	return &guestLog{
		base:  logger.With(args...),
		clock: clock,
		limit: rate.NewLimiter(logLinesPerSecond, logBurst),
		lines: lineSplitter{max: maxLogLine},
	}
}

// tag tags the lines that follow with args besides the guest's tags, in
// place of those tag gave before: a pooled activity instance's lines name
// the attempt it runs.
func (g *guestLog) tag(args ...any) {
	g.mu.Lock()
	g.tags, g.logger = args, nil
	g.mu.Unlock()
}

// tagged returns the log with the guest's and the attempt's tags, called
// with mu held.
func (g *guestLog) tagged() *slog.Logger {
	if g.logger == nil {
		g.logger = g.base.With(g.tags...)
	}
	return g.logger
}

func (g *guestLog) setReplaying(r bool) {
	g.mu.Lock()
	g.replaying = r
	g.mu.Unlock()
}

func (g *guestLog) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.replaying {
		g.lines.write(p, g.line)
	}
	return len(p), nil
}

// endStep ends the step or the activity attempt that wrote the output:
// a line it left without its newline is logged as it is, so that the
// next one starts a line of its own.
func (g *guestLog) endStep() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lines.flush(g.line)
}

// line logs one line of output, cut when it was longer than maxLogLine,
// at its level, unless the log leaves out that level (a line it leaves out
// counts for nothing) or the guest is over its rate.
func (g *guestLog) line(line []byte, cut bool) {
	level, text := lineLevel(line)
	if !g.base.Enabled(context.Background(), level) {
		return
	}
	logger := g.tagged()
	if !g.limit.AllowN(g.clock(), 1) {
		if g.dropped == 0 {
			logger.Warn(fmt.Sprintf("guest output is over the limit of %d lines a second (bursts of %d): its lines are dropped until it slows down", logLinesPerSecond, logBurst))
		}
		g.dropped++
		g.droppedBytes += len(line)
		return
	}
	if g.dropped > 0 {
		logger.Warn(fmt.Sprintf("guest output was dropped: %d lines (%d bytes or more) over the limit of %d lines a second", g.dropped, g.droppedBytes, logLinesPerSecond))
		g.dropped, g.droppedBytes = 0, 0
	}
	logger.Log(context.Background(), level, "guest: "+string(text))
	if cut {
		logger.Warn(fmt.Sprintf("guest output was cut: the line above was longer than %d KiB; the rest of it, up to its next newline, is dropped", maxLogLine>>10))
	}
}

// lineLevel returns the level of a line of guest output and its text: a
// line that begins with a syslog priority in angle brackets, "<0>" to
// "<7>", as systemd's journal reads them (sd-daemon.h), is logged at the
// slog level of that priority (0 to 3, emergency to error: Error; 4,
// warning: Warn; 5 and 6, notice and info: Info; 7, debug: Debug) without
// the prefix; any other line at Info (abi/ABI.md, "Log lines").
func lineLevel(line []byte) (slog.Level, []byte) {
	if len(line) < 3 || line[0] != '<' || line[1] < '0' || line[1] > '7' || line[2] != '>' {
		return slog.LevelInfo, line
	}
	level := slog.LevelInfo
	switch p := line[1] - '0'; {
	case p <= 3:
		level = slog.LevelError
	case p == 4:
		level = slog.LevelWarn
	case p == 7:
		level = slog.LevelDebug
	}
	return level, line[3:]
}

// lineSplitter splits a stream of output into lines without holding more
// than max bytes of it: a line longer than that is handed on cut at max
// bytes, and the rest of it, up to its newline, is skipped.
type lineSplitter struct {
	max     int
	partial []byte
	// skipping says the line under way was cut and handed on already.
	skipping bool
}

// flush hands on the line under way, if it has not been, and starts a new
// one.
func (s *lineSplitter) flush(line func(b []byte, cut bool)) {
	if len(s.partial) > 0 && !s.skipping {
		line(s.partial, false)
	}
	s.partial, s.skipping = s.partial[:0], false
}

// write splits p, the next part of the stream, calling line for each line
// it ends (without its newline) or cuts.
func (s *lineSplitter) write(p []byte, line func(b []byte, cut bool)) {
	for len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		part := p
		if end >= 0 {
			part = p[:end]
		}
		if !s.skipping {
			if room := s.max - len(s.partial); len(part) > room {
				s.partial = append(s.partial, part[:room]...)
				line(s.partial, true)
				s.partial, s.skipping = s.partial[:0], true
			} else {
				s.partial = append(s.partial, part...)
			}
		}
		if end < 0 {
			return
		}
		if !s.skipping {
			line(s.partial, false)
		}
		s.partial, s.skipping = s.partial[:0], false
		p = p[end+1:]
	}
}
