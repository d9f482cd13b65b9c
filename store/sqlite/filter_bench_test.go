package sqlite

import (
	"testing"

	"github.com/durabox/durabox/store/storetest"
)

// BenchmarkListWhere_1M lists the first page (100) of instances that
// filters on search attributes select, among 1,000,000 instances with two
// attributes each seeded in bulk SQL, and reports the p50 and p99 of a
// page's time (make bench-filter; BENCHMARKS.md).
func BenchmarkListWhere_1M(b *testing.B) {
	s, _ := openTest(b)
	seedAttributes(b, s, 1_000_000)
	storetest.BenchmarkListWhere(b, s)
}
