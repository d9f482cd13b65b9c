package main

import "time"

// figure is one series the soak samples, in unit, and the bound on its
// slope once warm, in unit a minute (0: reported, not bounded).
type figure struct {
	name, unit string
	bound      float64
	of         func(*sample) float64
}

const mib = 1 << 20

// figures are the series the soak fits, with their bounds. A bound is
// what a steady host stays under once warm, with room for the noise of
// a shared machine: the leaks it is there to catch grew tens of MiB, and
// hundreds of entries, a minute.
var figures = []figure{
	{"pss", "MiB", 4, func(s *sample) float64 { return s.PSS / mib }},
	{"rss", "MiB", 4, func(s *sample) float64 { return s.RSS / mib }},
	{"go_heap", "MiB", 4, func(s *sample) float64 { return s.Heap / mib }},
	{"live_entries", "entries", 10, func(s *sample) float64 { return s.Live }},
	{"live_memory", "MiB", 4, func(s *sample) float64 { return s.LiveMemory / mib }},
	{"threads", "threads", 1, func(s *sample) float64 { return s.Threads }},
	{"goroutines", "goroutines", 20, func(s *sample) float64 { return s.Goroutines }},
	{"db", "MiB", 2, func(s *sample) float64 { return s.DB / mib }},
	{"wal", "MiB", 2, func(s *sample) float64 { return s.WAL / mib }},
	{"log", "KiB", 64, func(s *sample) float64 { return s.Log / 1024 }},
	{"timers", "timers", 0, func(s *sample) float64 { return s.Timers }},
	// A host that falls behind its load is not steady either: its queue,
	// then its database, grow.
	{"ready", "messages", 60, func(s *sample) float64 { return s.Ready }},
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
