package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/serving"
	"github.com/durabox/durabox/store"
)

// updates measures an update's round trip, from the request to its
// answer (one turn of the instance and its commit): c.updates updates of
// one instance sent one after another (update_p50, update_p99), then as
// many spread over 64 instances with 64 in flight at once, one client an
// instance (update_64_p50, update_64_p99, and their rate).
func updates(c *config, commits float64) error {
	b, err := newBench(c, "update", c.benchModule, serving.Config{})
	if err != nil {
		return err
	}
	defer b.close()
	ctx := context.Background()
	one, err := roundTrips(ctx, b, "one", 1, c.updates)
	if err != nil {
		return err
	}
	fmt.Printf("# update: %d updates of one instance, one after another\n", c.updates)
	report("update_p50", ms(one[len(one)/2]), "ms")
	report("update_p99", ms(one[len(one)*99/100]), "ms")
	start := time.Now()
	many, err := roundTrips(ctx, b, "many", 64, c.updates)
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("# update_64: %d updates over 64 instances, 64 in flight\n", len(many))
	report("update_64_p50", ms(many[len(many)/2]), "ms")
	report("update_64_p99", ms(many[len(many)*99/100]), "ms")
	rate := float64(len(many)) / took.Seconds()
	report("update_64_rate", rate, "updates/s")
	report("update_64_per_commit", rate/commits, "updates/commit")
	return nil
}

// roundTrips starts instances Updated instances (named after prefix) and
// sends them n updates in all, one client an instance, each waiting for
// its answer before it sends the next; it returns every round trip.
func roundTrips(ctx context.Context, b *bench, prefix string, instances, n int) ([]time.Duration, error) {
	ids := make([]string, instances)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		if _, err := b.h.Start(ctx, "Updated", nil, ids[i]); err != nil {
			return nil, err
		}
	}
	var mu sync.Mutex
	var times []time.Duration
	var wg sync.WaitGroup
	errs := make(chan error, instances)
	for i, id := range ids {
		count := n / instances
		if i < n%instances {
			count++
		}
		wg.Go(func() {
			for k := 1; k <= count; k++ {
				start := time.Now()
				u, err := b.h.Update(ctx, id, api.UpdateRequest{Name: "Add", Data: json.RawMessage("1")}, time.Minute)
				took := time.Since(start)
				if err == nil && (u.State != store.UpdateCompleted || string(u.Result) != strconv.Itoa(k)) {
					err = fmt.Errorf("update %d of %s: %s with %s %v; want Completed with %d", k, id, u.State, u.Result, u.Failure, k)
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				times = append(times, took)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	slices.Sort(times)
	return times, nil
}
