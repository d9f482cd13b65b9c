// Command heap is a guest whose orchestration decides by its own heap: it
// reads the Go runtime's memory statistics, counts the finalizers that ran
// after a collection, notes its goroutine's id and how many goroutines
// there are, and sizes its allocations and its activity calls by what it
// saw, between every await. Anything that lets the heap of a live
// instance drift from that of a replay shows in its history.
package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Heap", Heap)
	durabox.RegisterActivity("Record", func(_ context.Context, s string) (string, error) { return s, nil })
}

// finalized counts the finalizers that have run; keep holds what the
// orchestration allocated, sized by what it observed.
var (
	finalized int
	keep      [][]byte
)

// Heap runs rounds. Each round logs, asks about a patch, starts a branch
// that allocates,
// allocates garbage with finalizers, collects every other round, and sets
// what it saw (heap statistics, finalizers run, goroutines) as its custom
// status. Then it calls Record as many times as its count of allocations
// says, with inputs one byte longer each time, so that the activations
// that bring their results back take every size in a range, and allocates
// as much as its heap size says.
func Heap(ctx *durabox.Context, rounds int) (string, error) {
	log := ctx.Logger()
	var last string
	calls := 0
	for r := range rounds {
		log.Info("round", "n", r)
		fmt.Println("round", r)
		// Asking about a patch does the same work live and on replay.
		ctx.Patched(fmt.Sprintf("round-%d", r))
		// A branch that allocates, and the goroutine it runs on, come and go.
		ctx.Go(func(*durabox.Context) { keep = append(keep, make([]byte, 100*r)) })
		seen := observe(r)
		ctx.SetCustomStatus(fmt.Sprintf("round %d: %s", r, seen))
		futures := make([]*durabox.Future, 1+seen.mallocs%3)
		for i := range futures {
			futures[i] = ctx.CallActivity("Record", fmt.Sprintf("%d.%d %s", r, i, strings.Repeat("x", calls)))
			calls++
		}
		for _, f := range futures {
			if err := f.Get(&last); err != nil {
				return "", err
			}
			keep = append(keep, make([]byte, 1+seen.heapAlloc%4096))
		}
	}
	return last, nil
}

// stats is what one observation saw.
type stats struct {
	heapAlloc, mallocs, frees, numGC, heapObjects, totalAlloc uint64
	heapInuse, stackInuse, sys, nextGC, pauseTotal, lastGC    uint64
	finalized, goroutines                                     int
	// goroutine is the header of the calling goroutine's stack trace,
	// which holds its id.
	goroutine string
}

func (s stats) String() string {
	return fmt.Sprintf("heap %d mallocs %d frees %d gcs %d objects %d total %d inuse %d stack %d sys %d next %d pauses %d last %d goroutines %d (%s) finalized %d",
		s.heapAlloc, s.mallocs, s.frees, s.numGC, s.heapObjects, s.totalAlloc, s.heapInuse, s.stackInuse, s.sys, s.nextGC, s.pauseTotal, s.lastGC, s.goroutines, s.goroutine, s.finalized)
}

// observe makes garbage with finalizers, sized by round, collects every
// other round, and reads the memory statistics.
func observe(round int) stats {
	for i := range 8 + round {
		p := &[64]byte{byte(i)}
		runtime.SetFinalizer(p, func(*[64]byte) { finalized++ })
	}
	if round%2 == 1 {
		runtime.GC()
		runtime.Gosched()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	buf := make([]byte, 64)
	header, _, _ := strings.Cut(string(buf[:runtime.Stack(buf, false)]), ":")
	return stats{m.HeapAlloc, m.Mallocs, m.Frees, uint64(m.NumGC), m.HeapObjects, m.TotalAlloc,
		m.HeapInuse, m.StackInuse, m.Sys, m.NextGC, m.PauseTotalNs, m.LastGC, finalized, runtime.NumGoroutine(), header}
}

func main() {}
