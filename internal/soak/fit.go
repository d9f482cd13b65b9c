package main

import (
	"fmt"
	"time"
)

// figure is one series the soak samples, in unit, with its bound once
// warm: across the warm window, the fitted line may rise by step, plus
// rate a minute (both 0: reported, not bounded). The step absorbs what
// rises once and stays (a burst's new activity instances, a thread, the
// WAL reaching its usual size), which in a short run would read as a
// steep slope; the rate is what a long run holds a figure to.
type figure struct {
	name, unit string
	step, rate float64
	of         func(*sample) float64
}

const mib = 1 << 20

// figures are the series the soak fits, with their bounds. The leaks the
// soak is there to catch grew tens of MiB, and hundreds of cache entries,
// a minute; a steady host stays within these with room for the noise of a
// shared machine.
var figures = []figure{
	{"pss", "MiB", 24, 1, func(s *sample) float64 { return s.PSS / mib }},
	// RSS is reported, not bounded: every instance maps its module's
	// snapshot (MAP_SHARED), and RSS counts a shared page once for each
	// mapping that touched it, so it steps up by tens of MiB when a burst
	// starts activity instances while PSS, which counts the page once,
	// barely moves (CI's 3-minute form, run here on 2026-11-27 at 12:40:
	// RSS +54.6 MiB in five seconds, PSS +3.3). PSS is the figure that
	// measures what the host holds.
	{"rss", "MiB", 0, 0, func(s *sample) float64 { return s.RSS / mib }},
	{"go_heap", "MiB", 16, 1, func(s *sample) float64 { return s.Heap / mib }},
	{"live_entries", "entries", 20, 2, func(s *sample) float64 { return s.Live }},
	{"live_memory", "MiB", 8, 1, func(s *sample) float64 { return s.LiveMemory / mib }},
	{"threads", "threads", 4, 0.2, func(s *sample) float64 { return s.Threads }},
	{"goroutines", "goroutines", 50, 2, func(s *sample) float64 { return s.Goroutines }},
	{"db", "MiB", 4, 0.2, func(s *sample) float64 { return s.DB / mib }},
	// The WAL's step is store/sqlite's limit on the WAL it starts over.
	{"wal", "MiB", 16, 0.2, func(s *sample) float64 { return s.WAL / mib }},
	{"log", "KiB", 16, 16, func(s *sample) float64 { return s.Log / 1024 }},
	{"timers", "timers", 0, 0, func(s *sample) float64 { return s.Timers }},
	// A host that falls behind its load is not steady either: its queue,
	// then its database, grow.
	{"ready", "messages", 200, 10, func(s *sample) float64 { return s.Ready }},
}

// check says how f rose across warm, if more than its bound.
func (f figure) check(warm []sample) (string, bool) {
	if f.step == 0 && f.rate == 0 || len(warm) < 2 {
		return "", true
	}
	window := minutes(warm[len(warm)-1].At - warm[0].At)
	s := slope(warm, f)
	if rise := s * window; rise > f.step+f.rate*window {
		return fmt.Sprintf("%s rose %.1f %s across the %.1f minutes once warm (%.2f a minute); the bound is %g %s plus %g a minute",
			f.name, rise, f.unit, window, s, f.step, f.unit, f.rate), false
	}
	return "", true
}

// slope fits a least-squares line to f over samples and returns its slope
// in f's unit a minute (0 with fewer than two samples).
func slope(samples []sample, f figure) float64 {
	n := float64(len(samples))
	if n < 2 {
		return 0
	}
	var sx, sy float64
	for i := range samples {
		sx += minutes(samples[i].At)
		sy += f.of(&samples[i])
	}
	mx, my := sx/n, sy/n
	var sxy, sxx float64
	for i := range samples {
		dx := minutes(samples[i].At) - mx
		sxy += dx * (f.of(&samples[i]) - my)
		sxx += dx * dx
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

func minutes(d time.Duration) float64 { return d.Minutes() }
