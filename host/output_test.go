package host_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// TestOutputFloodStaysBounded runs guests that write a gibibyte with no
// newline, to stdout and to stderr, from an orchestration and from an
// activity, on a host in this process, and reads the process's peak
// resident memory from /proc: it must rise by less than floodBudget, and
// the instance's log must say that the line was cut.
//
// Not parallel: it reads the process's peak resident memory, which tests
// running beside it would raise.
func TestOutputFloodStaysBounded(t *testing.T) {
	// floodBudget is what one flood may add to the host's peak resident
	// memory: the guest's own linear memory and a cut line, not its output.
	const floodBudget = 32 << 20
	logs := &records{}
	h := startHost(t, host.Options{Logger: slog.New(logs)})
	h.deploy(t, "host/testdata/guests/flood")
	for _, tt := range []struct{ orchestration, stream string }{
		{"Flood", "stdout"},
		{"Flood", "stderr"},
		{"FloodInActivity", "stdout"},
		{"FloodInActivity", "stderr"},
	} {
		t.Run(tt.orchestration+"/"+tt.stream, func(t *testing.T) {
			logs.reset()
			resetPeakRSS(t)
			before := procStatus(t, "VmHWM")
			inst := h.run(t, tt.orchestration, strconv.Quote(tt.stream))
			peak := procStatus(t, "VmHWM")
			t.Logf("peak resident memory %d MiB before, %d MiB after a gibibyte of %s", before>>20, peak>>20, tt.stream)
			if inst.Status != engine.StatusCompleted || string(inst.Result) != strconv.Quote("flooded "+tt.stream) {
				t.Fatalf("status %s result %s failure %+v", inst.Status, inst.Result, inst.Failure)
			}
			if peak-before > floodBudget {
				t.Errorf("the host's peak resident memory rose by %d MiB under the flood; the budget is %d MiB", (peak-before)>>20, floodBudget>>20)
			}
			if !logs.has("output was cut") {
				t.Errorf("no log record says the output was cut; the log has:\n%s", logs)
			}
		})
	}
}

// resetPeakRSS resets the process's peak resident memory (VmHWM) to its
// current resident memory.
func resetPeakRSS(t *testing.T) {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak resident memory: %v (this test reads Linux's /proc)", err)
	}
}

// procStatus returns a field of /proc/self/status given in kB, in bytes.
func procStatus(t *testing.T, field string) uint64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatalf("%v (this test reads Linux's /proc)", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), ":")
		if ok && name == field {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/self/status: %s: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/self/status has no %s", field)
	return 0
}

// records is a slog handler that keeps the start of every record's
// message, with its attributes.
type records struct {
	mu    sync.Mutex
	lines []string
	// more is closed when a record comes, and replaced.
	more chan struct{}
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }

func (r *records) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Message
	if len(line) > 200 {
		line = fmt.Sprintf("%s… (%d bytes)", line[:200], len(line))
	}
	rec.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, line)
	if r.more != nil {
		close(r.more)
		r.more = nil
	}
	r.mu.Unlock()
	return nil
}

// wait waits until a record holds s, for a minute at most.
func (r *records) wait(t *testing.T, s string) {
	t.Helper()
	giveUp := time.After(time.Minute)
	for {
		r.mu.Lock()
		for _, l := range r.lines {
			if strings.Contains(l, s) {
				r.mu.Unlock()
				return
			}
		}
		if r.more == nil {
			r.more = make(chan struct{})
		}
		more := r.more
		r.mu.Unlock()
		select {
		case <-more:
		case <-giveUp:
			t.Fatalf("no log record holds %q after a minute; the log has:\n%s", s, r)
		}
	}
}

func (r *records) reset() {
	r.mu.Lock()
	r.lines = nil
	r.mu.Unlock()
}

// has reports whether a record's message holds s.
func (r *records) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// count returns how many records hold s.
func (r *records) count(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

func (r *records) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// TestOutputLinesAreRateLimited runs an orchestration that prints 100,000
// short lines on a host whose clock stands still: its log takes the burst
// of lines a guest may write at once, says once that it drops the rest,
// and logs nothing more of them.
func TestOutputLinesAreRateLimited(t *testing.T) {
	t.Parallel()
	logs := &records{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := startHost(t, host.Options{Logger: slog.New(logs), Clock: func() time.Time { return now }})
	h.deploy(t, "host/testdata/guests/flood")
	inst := h.run(t, "Lines", "100000")
	if inst.Status != engine.StatusCompleted {
		t.Fatalf("status %s failure %+v", inst.Status, inst.Failure)
	}
	if n := logs.count("guest: a short line"); n != 1000 {
		t.Errorf("%d lines of the guest's 100,000 logged; want the burst of 1000", n)
	}
	if n := logs.count("guest output is over the limit of 100 lines a second (bursts of 1000): its lines are dropped until it slows down"); n != 1 {
		t.Errorf("the log says %d times that the guest's lines are dropped; want once", n)
	}
}
