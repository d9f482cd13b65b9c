package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/internal/logbuf"
)

// TestLineSplitterCutsLongLines splits streams written in several parts:
// lines end at newlines or where the stream is flushed (the end of a step,
// written flush here), and a line longer than the limit is handed on cut
// at it, the rest of it skipped up to its newline or the flush.
func TestLineSplitterCutsLongLines(t *testing.T) {
	t.Parallel()
	const flush = "<flush>"
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lines", []string{"ab\ncd\n"}, []string{"ab", "cd"}},
		{"a line in parts", []string{"a", "b", "c\nd"}, []string{"abc"}},
		{"empty lines", []string{"\n\n"}, []string{"", ""}},
		{"exactly the limit", []string{"abcd\n"}, []string{"abcd"}},
		{"cut in one write", []string{"abcdef\ngh\n"}, []string{"abcd (cut)", "gh"}},
		{"cut across writes", []string{"ab", "cdef", "gh", "ij\nk\n"}, []string{"abcd (cut)", "k"}},
		{"cut and never ended", []string{"abcde", "fgh", "ijk"}, []string{"abcd (cut)"}},
		{"flushed", []string{"ab", flush, "cd\n"}, []string{"ab", "cd"}},
		{"flushed after a cut", []string{"abcdef", flush, "gh\n"}, []string{"abcd (cut)", "gh"}},
		{"flushed with nothing", []string{flush, "ab\n", flush}, []string{"ab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := lineSplitter{max: 4}
			var got []string
			line := func(b []byte, cut bool) {
				if cut {
					got = append(got, fmt.Sprintf("%s (cut)", b))
				} else {
					got = append(got, string(b))
				}
			}
			for _, w := range tt.writes {
				if w == flush {
					s.flush(line)
				} else {
					s.write([]byte(w), line)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if cap(s.partial) > 8 {
				t.Errorf("the splitter holds %d bytes; its limit is 4", cap(s.partial))
			}
		})
	}
}

// TestLineLevel reads the level a guest's line names: a syslog priority in
// angle brackets, taken off the line; anything else is a line at Info as it
// stands.
func TestLineLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line  string
		level slog.Level
		text  string
	}{
		{"<0>emergency", slog.LevelError, "emergency"},
		{"<2>critical", slog.LevelError, "critical"},
		{"<3>error", slog.LevelError, "error"},
		{"<4>warning", slog.LevelWarn, "warning"},
		{"<5>notice", slog.LevelInfo, "notice"},
		{"<6>info", slog.LevelInfo, "info"},
		{"<7>debug", slog.LevelDebug, "debug"},
		{"<3>", slog.LevelError, ""},
		{"<8>not a priority", slog.LevelInfo, "<8>not a priority"},
		{"<33>two digits", slog.LevelInfo, "<33>two digits"},
		{"<3 no bracket", slog.LevelInfo, "<3 no bracket"},
		{" <3>indented", slog.LevelInfo, " <3>indented"},
		{"<", slog.LevelInfo, "<"},
		{"", slog.LevelInfo, ""},
		{"plain", slog.LevelInfo, "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			level, text := lineLevel([]byte(tt.line))
			if level != tt.level || string(text) != tt.text {
				t.Errorf("%q: %s %q, want %s %q", tt.line, level, text, tt.level, tt.text)
			}
		})
	}
}

// TestGuestLogLevels runs the levels guest, which logs at every level from
// an orchestration and an activity, on a host whose log is at warn, as
// durabox serve --log-level warn makes it, and keeps no instance live (each
// turn replays the steps before it). The log has each warning and error
// once, at its level, tagged with the instance and its execution, and an
// activity's with the activity, its schedule id and the attempt too; it has
// none of the guest's info and debug lines, and no line of a replayed step
// again.
func TestGuestLogLevels(t *testing.T) {
	t.Parallel()
	var log logbuf.Buffer
	h := newBareHostWith(t, Options{NoLiveCache: true, Clock: func() time.Time { return conformanceNow },
		Logger: slog.New(slog.NewJSONHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	deployGuest(t, h, "host/testdata/guests/levels", nil)
	if _, err := h.Start(context.Background(), "Levels", nil, "levels"); err != nil {
		t.Fatal(err)
	}
	drive(t, h, conformanceNow, false)
	if inst, err := h.Instance(context.Background(), "levels"); err != nil || inst.Status != engine.StatusCompleted {
		t.Fatalf("instance: %+v, %v", inst, err)
	}
	type record struct {
		Level, Msg, Instance, Activity string
		Execution, ScheduleID, Attempt int64
	}
	var got []record
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if strings.HasPrefix(r.Msg, "guest: ") {
			got = append(got, r)
		}
	}
	var want []record
	for step := range 3 {
		want = append(want,
			record{Level: "WARN", Msg: fmt.Sprintf("guest: orchestration warning step=%d", step), Instance: "levels", Execution: 1},
			record{Level: "ERROR", Msg: fmt.Sprintf("guest: orchestration error step=%d", step), Instance: "levels", Execution: 1})
		if step == 2 {
			break
		}
		shout := record{Instance: "levels", Execution: 1, Activity: "Shout", ScheduleID: int64(2 + 2*step), Attempt: 1}
		for _, r := range []struct{ level, msg string }{
			{"WARN", fmt.Sprintf("activity warning step=%d", step)},
			{"ERROR", fmt.Sprintf("activity error step=%d", step)},
			{"ERROR", "activity raw critical"},
		} {
			shout.Level, shout.Msg = r.level, "guest: "+r.msg
			want = append(want, shout)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the guest's lines in a log at warn:\n%s\nwant:\n%s\nthe log:\n%s", describeRecords(got), describeRecords(want), log.String())
	}
}

func describeRecords[T any](records []T) string {
	var b strings.Builder
	for _, r := range records {
		fmt.Fprintf(&b, "  %+v\n", r)
	}
	return b.String()
}

// TestLinesLeftOutDoNotCount: on a log at warn, a guest's debug lines,
// more than its burst, are left out without counting against its rate: its
// error line after them is logged, and nothing is said to be dropped.
func TestLinesLeftOutDoNotCount(t *testing.T) {
	t.Parallel()
	var log logbuf.Buffer
	g := newGuestLog(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})), func() time.Time { return conformanceNow }, "instance", "i")
	for range 2 * logBurst {
		g.Write([]byte("<7>detail\n"))
	}
	g.Write([]byte("<3>failed\n"))
	if want := `level=ERROR msg="guest: failed" instance=i` + "\n"; !strings.HasSuffix(log.String(), want) || strings.Count(log.String(), "\n") != 1 {
		t.Errorf("the log:\n%s\nwant one line, ending %q", log.String(), want)
	}
}

// withCounter is a slog handler that counts the loggers made from it with
// attributes (WithAttrs, which a text or JSON handler pays for by
// formatting them).
type withCounter struct {
	slog.Handler
	withs *int
}

func (h withCounter) WithAttrs(as []slog.Attr) slog.Handler {
	*h.withs++
	return withCounter{h.Handler.WithAttrs(as), h.withs}
}

// TestQuietAttemptsMakeNoLogger: a pooled activity instance's log is
// tagged for each attempt it runs, and an attempt that prints nothing
// makes no logger with its tags (issue 35: serve's text logger formatted
// every attempt's six tags, a fan-out of 1,000 a thousand times, for no
// line); the line of the attempt that prints carries its own tags, not an
// earlier attempt's.
func TestQuietAttemptsMakeNoLogger(t *testing.T) {
	t.Parallel()
	var log logbuf.Buffer
	withs := 0
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	g := newGuestLog(slog.New(withCounter{slog.NewTextHandler(&log, noTime), &withs}), func() time.Time { return conformanceNow }, "module", "m")
	base := withs
	for i := range 1000 {
		g.tag("attempt", i)
		g.endStep()
	}
	if withs != base {
		t.Errorf("1,000 attempts that printed nothing made %d loggers with their tags, want none", withs-base)
	}
	g.tag("attempt", 1000)
	g.Write([]byte("done\n"))
	g.Write([]byte("again\n"))
	if withs != base+1 {
		t.Errorf("an attempt that printed two lines made %d loggers with its tags, want 1", withs-base)
	}
	want := `level=INFO msg="guest: done" module=m attempt=1000` + "\n" + `level=INFO msg="guest: again" module=m attempt=1000` + "\n"
	if got := log.String(); got != want {
		t.Errorf("the log:\n%s\nwant:\n%s", got, want)
	}
}
