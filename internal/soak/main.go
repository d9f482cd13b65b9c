// Command soak is Durabox's soak run (make soaktest): it starts a real
// durabox serve with --retention set, drives a steady, modest load through
// its HTTP API for some minutes (hellos at a rate, approval-style instances
// that wait and are approved, instances that continue as new every second),
// and samples the host as it runs: its PSS and RSS, its Go heap, its live
// cache's entries and memory, its OS threads, its timers, its database and
// WAL files and its log. Once warm, it fits a least-squares line to each
// sample series and fails when the line rises, across the warm window,
// by more than the figure's bound (a step, plus a rate a minute): a host
// left running must stay the same size.
//
// It prints each figure on a line "SOAK <name> <value> <unit>", then a
// table of the samples. It exits with status 1 when a figure is out of
// bounds (after listing each) and 2 when the run could not be carried out.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/durabox/durabox/internal/guestbuild"
)

// config is one run, from the flags.
type config struct {
	bin           string
	minutes       float64
	warmup        time.Duration
	every         time.Duration
	hellos        int
	approvals     int
	hold          time.Duration
	eternals      int
	retention     time.Duration
	sweepInterval time.Duration
	runtime       string
	keep          bool
}

func main() {
	os.Exit(run())
}

func run() int {
	var c config
	flag.StringVar(&c.bin, "bin", "bin/durabox", "the durabox `binary` to run (make soaktest builds it)")
	flag.Float64Var(&c.minutes, "minutes", 2, "how long the load runs, in `minutes`")
	flag.DurationVar(&c.warmup, "warmup", 0, "how long the host warms up before the slopes are fitted (default half the run, at most 5m)")
	flag.DurationVar(&c.every, "every", 5*time.Second, "how often the host is sampled")
	flag.IntVar(&c.hellos, "hellos", 100, "how many Greeting instances (examples/wasm/hello) to start a second")
	flag.IntVar(&c.approvals, "approvals", 50, "how many Approval instances (examples/wasm/approval) wait at once, each approved after --hold")
	flag.DurationVar(&c.hold, "hold", 5*time.Second, "how long each Approval instance waits for its decision")
	flag.IntVar(&c.eternals, "eternals", 20, "how many Heartbeat instances (examples/wasm/eternal) continue as new, each once a second")
	flag.DurationVar(&c.retention, "retention", 30*time.Second, "the host's --retention")
	flag.DurationVar(&c.sweepInterval, "sweep-interval", 10*time.Second, "the host's --sweep-interval")
	flag.StringVar(&c.runtime, "runtime", "wazero", "the host's --runtime")
	flag.BoolVar(&c.keep, "keep", false, "keep the database and the host's log")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "soak: unexpected arguments %q; every option is a flag (soak -h lists them)\n", flag.Args())
		return 2
	}
	if c.warmup == 0 {
		c.warmup = min(time.Duration(c.minutes*float64(time.Minute))/2, 5*time.Minute)
	}
	defer guestbuild.Cleanup()
	r, err := soak(&c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	r.print(os.Stdout)
	if out := r.outOfBounds(); len(out) > 0 {
		for _, o := range out {
			fmt.Println("soak: out of bounds:", o)
		}
		return 1
	}
	fmt.Println("soak: every figure within its bound")
	return 0
}
