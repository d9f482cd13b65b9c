package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/query"
)

// listWhereFilters are the filters BenchmarkListWhere lists by, on the
// seed of the stores' benchmarks: customer "c-0" to "c-999" (i mod 1000)
// and amount 0 to 499 (i mod 500) on instance i; every fourth Completed.
var listWhereFilters = []string{
	`customer = "c-42"`,
	`customer = "c-42" AND amount < 100`,
	`amount = 8 AND status = "Completed"`,
	`customer IN ("c-1", "c-2") OR amount = 499`,
}

// BenchmarkListWhere lists the first page (100) of the instances each of
// listWhereFilters selects, in turn, b.N times, and reports the p50 and
// p99 of a page's time in milliseconds.
func BenchmarkListWhere(b *testing.B, s store.Store) {
	var filters []query.Expr
	for _, f := range listWhereFilters {
		e, err := query.Parse(f)
		if err != nil {
			b.Fatal(err)
		}
		filters = append(filters, e)
	}
	ctx := context.Background()
	took := make([][]time.Duration, len(filters))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f := i % len(filters)
		start := time.Now()
		page, err := s.ListInstances(ctx, store.InstanceQuery{Filter: store.InstanceFilter{Where: filters[f]}, Limit: 100})
		if err != nil || len(page.Instances) == 0 {
			b.Fatalf("%s: %d instances, %v", listWhereFilters[f], len(page.Instances), err)
		}
		took[f] = append(took[f], time.Since(start))
	}
	b.StopTimer()
	// The p50 and p99 of every page, then of each filter's (p50-1, p99-1
	// for the first filter, …).
	ms := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[int(p*float64(len(d)-1))]) / 1e6
	}
	all := slices.Concat(took...)
	b.ReportMetric(ms(all, 0.50), "p50-ms")
	b.ReportMetric(ms(all, 0.99), "p99-ms")
	for f, d := range took {
		if len(d) > 0 {
			b.ReportMetric(ms(d, 0.50), fmt.Sprintf("p50-ms-%d", f+1))
			b.ReportMetric(ms(d, 0.99), fmt.Sprintf("p99-ms-%d", f+1))
		}
	}
}
