package postgres

import (
	"testing"

	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/store/storetest"
)

// BenchmarkListWhere_1M is store/sqlite's, on PostgreSQL: the first page
// (100) of the instances filters select among 1,000,000 seeded with
// generate_series, with the p50 and p99 of a page's time (make
// bench-filter; BENCHMARKS.md).
func BenchmarkListWhere_1M(b *testing.B) {
	pgtest.Server(b)
	s, err := Open(pgtest.Schema(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	seedAttributes(b, s, 1_000_000)
	storetest.BenchmarkListWhere(b, s)
}
