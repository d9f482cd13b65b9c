// Package torture is Durabox's kill -9 torture test, run by make crashtest
// (the full run) and by this package's test (a short one).
//
// Run starts a real durabox serve on a fresh SQLite file, deploys the
// example modules and the tally module (testdata/tally), and drives a
// workload that mixes them: activities (hello, retry), durable timers
// (retry, eternal, tally), fan-out (fanout, tally), children (parentchild),
// continue-as-new (eternal), and Approval events raised from outside
// (approval), some before the instance waits, one while it waits, one after
// it took an event, one after it ended; orders (order) sent updates, one
// its validator refuses, each sent again with its id until a host answers,
// with a query between them; and a Relay (tally) that starts a Collector
// and raises persistent events at it (ctx.Raise). Every instance has a fixed id and a
// result worked out from the examples' code. Starts and raises go on while
// the host is killed with SIGKILL, again and again, after a random time
// (seeded: a run prints its seed, and the same seed gives the same kill
// times), and restarted on the same file each time; a request the host did
// not answer is repeated against the next one. After the last kill, one host
// runs until every instance has finished, and the test checks:
//
//   - every instance, children included, completed with its expected result
//     and number of executions, and nothing else exists;
//   - every history is well formed: ids 1, 2, 3… without a gap or a
//     duplicate, a completion or cancellation only for an earlier schedule of
//     its kind and only once, nothing left open at the end, and exactly the
//     expected number of each kind of step (so a schedule recorded twice
//     shows);
//   - every update the host answered is in its instance's history once,
//     with the answer the client got, and a refused one not at all; every
//     event a Relay raised was delivered once (the counts of steps);
//   - every Approval event the host acknowledged was taken, or dropped by the
//     rules of positional events: events of one instance arrive in the order
//     raised, so the one taken must be no later than the first raised after
//     the instance was seen waiting;
//   - every tally activity a history says completed really ran: Mark prints a
//     line each time it runs, which the host logs as it is printed, so the
//     test counts real runs, and so how many activities ran more than once.
//     (The example modules' activities print nothing; for them the host's
//     log tells only how many it delivered more than once.)
//
// With Config.Postgres and Config.Hosts (make crashtest-pg: three hosts,
// 30 kills) several durabox serve processes share a PostgreSQL database,
// each on its own address, and the clients send each request to the next
// host in turn. A kill kills one host, sometimes two at once, and each is
// started again at once with its --host-id; now and then, and at least
// once, the server ends one host's connections (pg_terminate_backend).
// The checks are the same.
//
// TestKillDuringUpgrade uses the same harness on an upgrade: 120 instances
// of a module, three upgrades to a new one each killed with SIGKILL once it
// has reported some moves, and after each kill every instance is on exactly
// one module (moved, with the move as the last event of its history, or
// not, with its history as it was); a last upgrade finishes, and every
// instance completes on the module it ended up on.
//
// Caveat: the kill times are reproducible, what the host was doing at each
// is not; a seed replays the schedule, not the interleaving.
package torture
