package host_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/store/sqlite"
)

// TestWorkMadeHereNeedsNoFetchOnSQLite counts the fetches that found work
// on a host on SQLite, for hellos one at a time (a start, two turns and
// an activity each) and for a sequence of activities: none, since the
// host takes the work it makes for itself as it makes it (store.Handoff),
// where each turn and each task was a fetch of its own before (a query
// and a hand-off between threads: 3 a hello, 2 a step).
func TestWorkMadeHereNeedsNoFetchOnSQLite(t *testing.T) {
	t.Parallel()
	rec, run := recordedBenchHost(t)
	fetched := func() int { return rec.count("LockNextInstances") + rec.count("LockNextActivities") }
	// Warm: each module compiled, and its first instances run.
	run("Greeting", "warm")
	run("Sequential", 2)

	const hellos, steps = 20, 40
	before := fetched()
	for i := range hellos {
		run("Greeting", fmt.Sprint("world-", i))
	}
	perHello := float64(fetched()-before) / hellos
	before = fetched()
	run("Sequential", steps)
	perStep := float64(fetched()-before) / steps
	t.Logf("fetches that found work: %.2f a hello, %.2f a step", perHello, perStep)
	// A fetch may take the odd piece of work a commit left for it (the
	// dispatcher's fetch when a worker came idle as the commit leased):
	// at most one in ten.
	if perHello > 0.1 || perStep > 0.1 {
		t.Errorf("fetches found work %.2f times a hello and %.2f a step; want at most 0.1 of each", perHello, perStep)
	}
}

// TestIdleDispatchersAskNothingOfAHello counts what the idle dispatchers
// ask the store while hellos run one at a time, each start handed to a
// turn and each task to an activity worker as it commits: a hello's end,
// which makes no work, wakes no fetcher (it woke one, to find nothing),
// and a dispatcher woken only by work handed over keeps the due time it
// read before (it read it again: twice a hello). The dispatchers' poll is
// an hour, so that a slow machine's polls count nothing.
func TestIdleDispatchersAskNothingOfAHello(t *testing.T) {
	t.Parallel()
	rec, run := recordedBenchHostWith(t, host.Options{Poll: time.Hour})
	run("Greeting", "warm")
	asked := func() (fetches, dues int) {
		return rec.count("LockNextInstances found none") + rec.count("LockNextActivities found none"), rec.count("NextVisibleAt")
	}
	const hellos = 20
	fetches, dues := asked()
	for i := range hellos {
		run("Greeting", fmt.Sprint("world-", i))
	}
	f, d := asked()
	perFetch, perDue := float64(f-fetches)/hellos, float64(d-dues)/hellos
	t.Logf("a hello: %.2f fetches that found nothing, %.2f reads of the due time", perFetch, perDue)
	// The odd one: a commit's lease a fetch voided (the fetch then found
	// the task), or the poll.
	if perFetch > 0.2 || perDue > 0.2 {
		t.Errorf("a hello took %.2f fetches that found nothing and %.2f reads of the due time; want at most 0.2 of each", perFetch, perDue)
	}
}

// TestWaitReadsTheInstanceWhenItMayHaveEnded counts the reads of an
// instance while Wait waits for a sequence of 40 activities: a turn
// that leaves the instance running wakes no Wait, so it reads the
// instance when it begins and when the instance ends, where it read it
// again after every step (41 reads).
func TestWaitReadsTheInstanceWhenItMayHaveEnded(t *testing.T) {
	t.Parallel()
	rec, run := recordedBenchHost(t)
	run("Sequential", 2)
	const steps = 40
	before := rec.count("GetInstance")
	run("Sequential", steps)
	reads := rec.count("GetInstance") - before
	t.Logf("reads of the instance while a Wait waited for %d steps: %d", steps, reads)
	if reads > 3 {
		t.Errorf("the instance was read %d times while Wait waited for %d steps; want at most 3 (its start, its end, and one for a turn that raced the first read)", reads, steps)
	}
}

// recordedBenchHost runs a host on a new SQLite store, through a
// recordingStore, with the bench guests deployed, and returns the
// recording and the function that runs an orchestration to its end.
func recordedBenchHost(t *testing.T) (*recordingStore, func(name string, input any)) {
	t.Helper()
	return recordedBenchHostWith(t, host.Options{})
}

// recordedBenchHostWith is recordedBenchHost with the host's options.
func recordedBenchHostWith(t *testing.T, opts host.Options) (*recordingStore, func(name string, input any)) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rec := &recordingStore{Store: st}
	return rec, deployBenchGuests(t, runHost(t, st, rec, opts))
}
