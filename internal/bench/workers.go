package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/worker"
)

// workers measures activities run by workers outside the host, through
// its HTTP API on loopback: one fan-out of c.fanOut calls on a task queue
// served by 1, 4 and 16 workers (package worker, four attempts at once
// each: worker_N_rate, in activities/s), and a sequential orchestration of
// c.workerSteps calls, on the queue with one worker against in the module
// (worker_sequential_per_activity, module_sequential_per_activity, and the
// difference, worker_added_latency).
func workers(c *config, commits float64) error {
	b, err := newBench(c, "workers", c.benchModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	for i, n := range []int{1, 4, 16} {
		stop := runWorkers(b, n)
		id := fmt.Sprintf("fanout-%d", n)
		total, err := b.runOne("FanOutQueued", id, c.fanOut, c.fanOut*(c.fanOut-1)/2)
		stop()
		if err != nil {
			return err
		}
		if i == 0 {
			fmt.Printf("# worker: a fan-out of %d activities on a task queue, by N workers of 4 attempts each, through the API on loopback\n", c.fanOut)
		}
		rate := float64(c.fanOut) / total.Seconds()
		report(fmt.Sprintf("worker_%d_rate", n), rate, "activities/s")
		report(fmt.Sprintf("worker_%d_per_commit", n), rate/commits, "activities/commit")
	}
	stop := runWorkers(b, 1)
	defer stop()
	n := c.workerSteps
	queued, err := b.runOne("SequentialQueued", "sequential-queued", n, n*(n-1)/2)
	if err != nil {
		return err
	}
	inModule, err := b.runOne("Sequential", "sequential-module", n, n*(n-1)/2)
	if err != nil {
		return err
	}
	fmt.Printf("# worker_sequential: %d activities one after another, by one worker, and in the module\n", n)
	report("worker_sequential_per_activity", ms(queued)/float64(n), "ms")
	report("module_sequential_per_activity", ms(inModule)/float64(n), "ms")
	report("worker_added_latency", ms(queued-inModule)/float64(n), "ms")
	return nil
}

// runWorkers runs n workers of the task queue "bench", serving Echo,
// until the function it returns is called.
func runWorkers(b *bench, n int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		w := worker.New(b.c).OnQueue("bench").Register("Echo", func(_ context.Context, i int) (int, error) { return i, nil })
		wg.Go(func() { w.Run(ctx) })
	}
	return func() { cancel(); wg.Wait() }
}
