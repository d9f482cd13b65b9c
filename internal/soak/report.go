package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"text/tabwriter"
	"time"
)

// report is what one run saw.
type report struct {
	c       *config
	began   time.Time
	samples []sample
	load    *load
	exit    *os.ProcessState
	// logErrors counts the host's log lines at error level.
	logErrors int
}

// warm returns the samples taken once the host was warm.
func (r *report) warm() []sample {
	for i, s := range r.samples {
		if s.At >= r.c.warmup {
			return r.samples[i:]
		}
	}
	return nil
}

// rate is how many a second a counter of the samples rose once warm.
func rate(warm []sample, of func(*sample) float64) float64 {
	if len(warm) < 2 {
		return 0
	}
	first, last := &warm[0], &warm[len(warm)-1]
	return (of(last) - of(first)) / (last.At - first.At).Seconds()
}

func (r *report) print(w io.Writer) {
	c := r.c
	fmt.Fprintf(w, "# %s, %s/%s, %d CPUs, runtime %s, %.1f minutes (warm after %s), sampled every %s\n",
		r.began.UTC().Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), c.runtime, c.minutes, c.warmup, c.every)
	fmt.Fprintf(w, "# load: %d hellos/s, %d approvals waiting (approved after %s), %d instances continuing as new every second; --retention %s --sweep-interval %s\n",
		c.hellos, c.approvals, c.hold, c.eternals, c.retention, c.sweepInterval)
	warm := r.warm()
	secs := time.Since(r.began).Seconds()
	l := r.load
	fmt.Fprintf(w, "SOAK hellos_started %.1f /s\n", float64(l.hellos.Load())/secs)
	fmt.Fprintf(w, "SOAK hellos_missed %d starts\n", l.missed.Load())
	fmt.Fprintf(w, "SOAK hellos_finished_warm %.1f /s\n", rate(warm, func(s *sample) float64 { return s.Greetings }))
	fmt.Fprintf(w, "SOAK approvals %.1f /s\n", float64(l.approved.Load())/secs)
	fmt.Fprintf(w, "SOAK continued_as_new_warm %.1f /s\n", rate(warm, func(s *sample) float64 { return s.HeartbeatTurns })/heartbeatTurns)
	fmt.Fprintf(w, "SOAK request_errors %d requests\n", l.errs.Load())
	fmt.Fprintf(w, "SOAK log_errors %d lines\n", r.logErrors)
	for _, f := range figures {
		if len(warm) == 0 {
			break
		}
		fmt.Fprintf(w, "SOAK %s_warm %.1f %s\n", f.name, f.of(&warm[0]), f.unit)
		fmt.Fprintf(w, "SOAK %s_end %.1f %s\n", f.name, f.of(&warm[len(warm)-1]), f.unit)
		fmt.Fprintf(w, "SOAK %s_slope %.2f %s/min\n", f.name, slope(warm, f), f.unit)
	}
	r.table(w)
}

// heartbeatTurns is how many turns an execution of Heartbeat takes: its
// start, its activity's result, and its timer.
const heartbeatTurns = 3

// table prints every sample, a row each.
func (r *report) table(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "s\t")
	for _, f := range figures {
		fmt.Fprintf(tw, "%s (%s)\t", f.name, f.unit)
	}
	fmt.Fprintln(tw)
	for i := range r.samples {
		s := &r.samples[i]
		fmt.Fprintf(tw, "%.0f\t", s.At.Seconds())
		for _, f := range figures {
			fmt.Fprintf(tw, "%.1f\t", f.of(s))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// outOfBounds says what the run found out of bounds: a figure that rose
// past its bound, more timers than the instances that can take them, requests
// refused, a host that did not stop cleanly.
func (r *report) outOfBounds() []string {
	var out []string
	warm := r.warm()
	if len(warm) < 3 {
		out = append(out, fmt.Sprintf("only %d samples once warm: run longer than --warmup %s", len(warm), r.c.warmup))
	}
	for _, f := range figures {
		if why, ok := f.check(warm); !ok {
			out = append(out, why)
		}
	}
	waiting := float64(r.c.approvals + r.c.eternals)
	for _, s := range warm {
		if s.Timers > waiting {
			out = append(out, fmt.Sprintf("%.0f timers at %s, with %.0f instances that can hold one", s.Timers, s.At.Round(time.Second), waiting))
			break
		}
	}
	if n := r.load.errs.Load(); n > 0 {
		out = append(out, fmt.Sprintf("%d requests failed, the first with: %v", n, r.load.firstErr))
	}
	if r.exit != nil && !r.exit.Success() {
		out = append(out, fmt.Sprintf("durabox serve exited with %v", r.exit))
	}
	return out
}
