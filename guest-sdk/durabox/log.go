package durabox

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
)

// Logger returns a logger for orchestration code whose lines are logged
// once, when their step first runs: it writes to stderr, which becomes the
// instance's log, and the host drops what an orchestration writes while it
// replays. Each line goes to the host's log at the line's level, tagged
// with the instance and its execution, so `durabox serve --log-level warn`
// keeps its warnings and errors. (The logger itself does the same work
// live and on replay, so that it leaves the heap the same.)
func (c *Context) Logger() *slog.Logger {
	c.rt.own("ctx.Logger")
	return slog.New(newLogHandler(os.Stderr))
}

// ActivityLogger returns a logger for activity code: it writes to stderr,
// whose lines go to the host's log at their level, tagged with the
// instance, its execution, the activity, its schedule id and the attempt.
func ActivityLogger() *slog.Logger { return slog.New(newLogHandler(os.Stderr)) }

// logHandler writes each record as one line the host logs at the record's
// level (abi/ABI.md, "Log lines"): the level as a syslog priority in angle
// brackets ("<3>" error, "<4>" warning, "<6>" info, "<7>" debug), the
// message, and the attributes as slog's text handler writes them. The
// time is the host's to add (a guest's clock reads the logical time).
type logHandler struct {
	// text formats the attributes into *buf, under mu; the handlers
	// WithAttrs and WithGroup derive share both.
	text slog.Handler
	out  io.Writer
	mu   *sync.Mutex
	buf  *bytes.Buffer
}

func newLogHandler(out io.Writer) *logHandler {
	buf := new(bytes.Buffer)
	text := slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
			return slog.Attr{}
		}
		return a
	}})
	return &logHandler{text: text, out: out, mu: new(sync.Mutex), buf: buf}
}

// Enabled logs every level: the host's --log-level filters.
func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{text: h.text.WithAttrs(attrs), out: h.out, mu: h.mu, buf: h.buf}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{text: h.text.WithGroup(name), out: h.out, mu: h.mu, buf: h.buf}
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf.Reset()
	if err := h.text.Handle(ctx, r); err != nil {
		return err
	}
	attrs := bytes.TrimSuffix(h.buf.Bytes(), []byte("\n"))
	line := make([]byte, 0, 4+len(r.Message)+1+len(attrs)+1)
	line = append(line, '<', priority(r.Level), '>')
	line = appendMessage(line, r.Message)
	if len(attrs) > 0 {
		line = append(line, ' ')
		line = append(line, attrs...)
	}
	line = append(line, '\n')
	_, err := h.out.Write(line)
	return err
}

// priority is the syslog priority of level: 3 (error) for Error and above,
// 4 (warning) for Warn, 6 (info) for Info, 7 (debug) below.
func priority(level slog.Level) byte {
	switch {
	case level >= slog.LevelError:
		return '3'
	case level >= slog.LevelWarn:
		return '4'
	case level >= slog.LevelInfo:
		return '6'
	}
	return '7'
}

// appendMessage appends msg as it is, or quoted when it holds a newline or
// another control character, which would end or garble the line.
func appendMessage(line []byte, msg string) []byte {
	for i := 0; i < len(msg); i++ {
		if msg[i] < 0x20 || msg[i] == 0x7f {
			return strconv.AppendQuote(line, msg)
		}
	}
	return append(line, msg...)
}
