package sqlite

/*
#include <stdlib.h>

typedef struct sqlite3 sqlite3;
extern void sqlite3_progress_handler(sqlite3 *db, int n, int (*handler)(void *), void *arg);
extern const char *sqlite3_db_filename(sqlite3 *db, const char *name);

// durabox_step counts one step of SQLite's virtual machine in *arg.
static int durabox_step(void *arg) {
	__atomic_add_fetch((long long *)arg, 1, __ATOMIC_RELAXED);
	return 0;
}

// durabox_count_steps has SQLite count every step of db's virtual machine
// in a counter it allocates, and returns the counter.
static long long *durabox_count_steps(void *db) {
	long long *n = calloc(1, sizeof *n);
	if (n != NULL) {
		sqlite3_progress_handler((sqlite3 *)db, 1, durabox_step, n);
	}
	return n;
}

static const char *durabox_filename(void *db) {
	return sqlite3_db_filename((sqlite3 *)db, "main");
}

static long long durabox_steps(long long *n) {
	return __atomic_load_n(n, __ATOMIC_RELAXED);
}
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// The steps of SQLite's virtual machine, counted per database file: each
// row a query reads, each comparison and each row it writes takes a few,
// so the count is what the store's queries cost in work, whatever the
// machine's speed or load. The store's tests use it to hold a cost per
// item to a bound (cost_test.go); it is counted only on the connections
// opened while countSteps is set, which no program but the tests sets. It
// lives outside the tests because cgo does not build test files.
var (
	countSteps atomic.Bool
	stepsMu    sync.Mutex
	// stepCounters are the counters of the connections opened while
	// countSteps was set, by database file; they live as long as the
	// process (a test's few connections).
	stepCounters = map[string][]*C.longlong{}
)

// countStepsOn has SQLite count the steps of c's virtual machine, when
// countSteps is set.
func countStepsOn(c *sqlite3.SQLiteConn) error {
	if !countSteps.Load() {
		return nil
	}
	db, err := handle(c)
	if err != nil {
		return err
	}
	n := C.durabox_count_steps(db)
	if n == nil {
		return fmt.Errorf("sqlite: count the steps of a connection: out of memory")
	}
	path := C.GoString(C.durabox_filename(db))
	stepsMu.Lock()
	defer stepsMu.Unlock()
	stepCounters[path] = append(stepCounters[path], n)
	return nil
}

// stepsOf returns the steps counted so far on the connections to the
// database file path.
func stepsOf(path string) int64 {
	stepsMu.Lock()
	defer stepsMu.Unlock()
	var total int64
	for _, n := range stepCounters[path] {
		total += int64(C.durabox_steps(n))
	}
	return total
}
