package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/serving"
)

// queries measures a query of an instance that waits after c.queryCalls
// activities (a history of about twice as many events): on the instance
// the host keeps in memory (cached), and on a host that keeps none, where
// every query replays the history on a fresh wasm instance first
// (uncached). Each figure is the median of c.queries queries, asked one
// after another.
func queries(c *config, _ float64) error {
	for _, fig := range []struct {
		name   string
		unlike []func(*host.Options)
	}{
		{"query_cached", nil},
		{"query_uncached", []func(*host.Options){func(o *host.Options) { o.NoLiveCache = true }}},
	} {
		b, err := newBench(c, fig.name, c.benchModule, serving.Config{}, fig.unlike...)
		if err != nil {
			return err
		}
		p50, events, err := medianQuery(b, c.queryCalls, c.queries)
		if cerr := b.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", fig.name, err)
		}
		fmt.Printf("# %s: %d queries of an instance with %d events\n", fig.name, c.queries, events)
		report(fig.name+"_p50", us(p50), "us")
	}
	return nil
}

// medianQuery starts a Queried instance of calls activities on b, waits
// until it has made them all, then queries it n times and returns the
// median time of a query, and the length of its history.
func medianQuery(b *bench, calls, n int) (time.Duration, int, error) {
	ctx := context.Background()
	const id = "queried"
	if _, err := b.h.Start(ctx, "Queried", json.RawMessage(strconv.Itoa(calls)), id); err != nil {
		return 0, 0, err
	}
	// Started, each call scheduled and completed, the wait: polling the
	// history (a query would mark the live instance, and make each turn
	// after it replay).
	var history []engine.Event
	for len(history) < 2*calls+2 {
		time.Sleep(time.Millisecond)
		var err error
		if history, err = b.h.History(ctx, id); err != nil {
			return 0, 0, err
		}
	}
	want := strconv.Itoa(calls)
	times := make([]time.Duration, n)
	for i := range times {
		start := time.Now()
		got, err := b.h.Query(ctx, id, "Done", nil)
		times[i] = time.Since(start)
		if err != nil {
			return 0, 0, err
		}
		if string(got) != want {
			return 0, 0, fmt.Errorf("query Done answered %s, want %s", got, want)
		}
	}
	slices.Sort(times)
	return times[n/2], len(history), nil
}
