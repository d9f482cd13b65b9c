// Command crashtest is Durabox's kill -9 torture test (make crashtest). It
// runs a workload mixing the example orchestrations (activities, timers,
// fan-out, events raised from outside, children, continue-as-new) against a
// real durabox serve process, kills that process with SIGKILL at random
// moments, again and again, restarting it on the same SQLite file each
// time, and at the end checks every instance and every history. It prints
// one summary line, which ends with "lost 0" only when nothing was lost,
// and exits non-zero otherwise, after listing every violation.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/durabox/durabox/internal/guestbuild"
)

// config is one run.
type config struct {
	kills int
	scale int
	seed  uint64
	// minUp and maxUp bound how long the host runs before each kill.
	minUp, maxUp time.Duration
	// deadline bounds the wait for every instance to finish after the
	// last kill.
	deadline time.Duration
	// keep keeps the database and the host's log even after a clean run.
	keep bool
	out  io.Writer
}

// summary is the outcome of a run.
type summary struct {
	kills, instances, events, redelivered int
	violations                            []string
}

func (s *summary) String() string {
	return fmt.Sprintf("crashtest: %d kills, %d instances, %d events, %d activities ran more than once, lost %d",
		s.kills, s.instances, s.events, s.redelivered, len(s.violations))
}

func main() {
	c := config{out: os.Stdout}
	flag.IntVar(&c.kills, "kills", 24, "how many times to kill the host")
	flag.IntVar(&c.scale, "scale", 6, "how many instances of each example to run")
	seed := flag.Uint64("seed", 0, "the random `seed` of the kill times (0: from the clock); printed, to replay a run")
	flag.DurationVar(&c.minUp, "min-up", 50*time.Millisecond, "the shortest time the host runs between kills")
	flag.DurationVar(&c.maxUp, "max-up", 700*time.Millisecond, "the longest time the host runs between kills")
	flag.DurationVar(&c.deadline, "deadline", 3*time.Minute, "how long to wait, after the last kill, for every instance to finish")
	flag.BoolVar(&c.keep, "keep", false, "keep the database and the host's log, which are kept anyway when something was lost")
	flag.Parse()
	c.seed = *seed
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	s, err := run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		os.Exit(1)
	}
	fmt.Println(s)
	if len(s.violations) > 0 {
		os.Exit(1)
	}
}

// run builds durabox and the examples, runs the workload through c.kills
// kills, and checks the outcome.
func run(c config) (s *summary, err error) {
	fmt.Fprintf(c.out, "crashtest: seed %d (replay with --seed %d)\n", c.seed, c.seed)
	dir, err := os.MkdirTemp("", "durabox-crashtest-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err == nil && len(s.violations) == 0 && !c.keep {
			os.RemoveAll(dir)
			return
		}
		fmt.Fprintf(c.out, "crashtest: the database and the host's log are kept in %s\n", dir)
	}()
	defer guestbuild.Cleanup()
	bin := filepath.Join(dir, "durabox")
	build := exec.Command("go", "build", "-o", bin, "./cmd/durabox")
	build.Dir = guestbuild.Root()
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build durabox: %v\n%s", err, out)
	}
	var wasm [][]byte
	for _, m := range modules {
		b, err := guestbuild.Wasm("examples/wasm/" + m)
		if err != nil {
			return nil, err
		}
		wasm = append(wasm, b)
	}
	logPath := filepath.Join(dir, "host.log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()

	d := newDriver(plan(c.scale), wasm, c.kills)
	rng := rand.New(rand.NewPCG(c.seed, 0))
	db := filepath.Join(dir, "crash.db")
	// Deploy first, on a host that is not killed: compiling the modules
	// takes seconds, and the kills are for the work.
	srv, err := startServer(bin, db, log)
	if err != nil {
		return nil, err
	}
	if err := d.deploy(context.Background(), srv.client); err != nil {
		srv.kill()
		return nil, fmt.Errorf("deploy: %w", err)
	}
	srv.stop()
	s = &summary{}
	for s.kills < c.kills {
		srv, err := startServer(bin, db, log)
		if err != nil {
			return nil, fmt.Errorf("after %d kills: %w", s.kills, err)
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			d.drive(ctx, srv.client)
			close(done)
		}()
		time.Sleep(c.minUp + time.Duration(rng.Int64N(int64(c.maxUp-c.minUp)+1)))
		srv.kill()
		s.kills++
		stop()
		<-done
	}

	srv, err = startServer(bin, db, log)
	if err != nil {
		return nil, fmt.Errorf("after the last kill: %w", err)
	}
	defer srv.stop()
	ctx, cancel := context.WithTimeout(context.Background(), c.deadline)
	defer cancel()
	if err := d.finish(ctx, srv.client); err != nil {
		fmt.Fprintf(c.out, "crashtest: not every instance finished: %v (the host's log: %s)\n", err, logPath)
	}
	t, err := check(context.Background(), srv.client, d.planned)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	s.instances, s.events, s.violations = t.instances, t.events, t.violations
	if s.redelivered, err = redeliveries(logPath); err != nil {
		return nil, err
	}
	for _, v := range s.violations {
		fmt.Fprintln(c.out, "crashtest: LOST:", v)
	}
	return s, nil
}
