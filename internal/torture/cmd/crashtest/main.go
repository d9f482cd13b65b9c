// Command crashtest is Durabox's kill -9 torture test (make crashtest): it
// runs package torture's workload against a real durabox serve, killing it
// with SIGKILL at random moments, and prints one summary line, which ends
// with "lost 0" only when nothing was lost. With --postgres and --hosts
// (make crashtest-pg) several hosts share a PostgreSQL database, killed
// one or two at a time, and the server cuts their connections now and
// then. With --postgres own and --db-restarts (make dbrestarttest) the
// run's own PostgreSQL cluster is also taken down and brought back mid-run,
// by a fast shutdown, an immediate one and SIGKILL in turn; with
// --partitions (make partitiontest) each host runs in a network namespace
// of its own, and one at a time is cut off from its database (both ways or
// one way) or from everything for a while
// (where namespaces are not permitted it says so and exits 0, unless
// $DURABOX_REQUIRE_NETNS is set, as CI sets it). It exits with status 1
// when something was lost (after listing every violation) and 2 when the
// run could not be carried out.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/pgtest"
	"github.com/durabox/durabox/internal/torture"
)

// envRequireNetns, when set, makes partitions that cannot run a failure.
const envRequireNetns = "DURABOX_REQUIRE_NETNS"

func main() {
	os.Exit(run())
}

func run() int {
	c := torture.Config{Out: os.Stdout}
	flag.IntVar(&c.Kills, "kills", 0, "how many times to kill the host (default 24)")
	flag.IntVar(&c.Scale, "scale", 0, "how many instances of each of the 8 kinds to start, not counting the children they start (default 16)")
	flag.Uint64Var(&c.Seed, "seed", 0, "the random `seed` of the kill times (0: from the clock); the run prints it")
	flag.DurationVar(&c.MinUp, "min-up", 0, "the shortest time a host serves before it is killed (default 50ms)")
	flag.DurationVar(&c.MaxUp, "max-up", 0, "the longest time a host serves before it is killed (default 700ms)")
	flag.DurationVar(&c.Deadline, "deadline", 0, "how long, after the last kill, every instance has to finish (default 3m)")
	flag.StringVar(&c.Bin, "bin", "", "the durabox `binary` to run (default: build one)")
	flag.StringVar(&c.Durability, "durability", "", "the host's durability `mode`, full or normal; a kill must lose nothing in either (default full)")
	flag.BoolVar(&c.Keep, "keep", false, "keep the database and the host's log, which are kept anyway when something was lost")
	flag.StringVar(&c.Postgres, "postgres", "", "run the hosts on the PostgreSQL database at `URL` (a new schema in it), or \"auto\": the server the tests find ($DURABOX_POSTGRES_URL, 127.0.0.1:5432, or a throwaway cluster), or \"own\": a throwaway cluster of the run's own")
	flag.IntVar(&c.DBRestarts, "db-restarts", 0, "take the database down `N` times mid-run (fast, immediate, SIGKILL in turn); needs --postgres own")
	flag.IntVar(&c.Partitions, "partitions", 0, "run each host in a network namespace of its own and cut one off `N` times mid-run, for 1 to 15s (from its database, from everything, from its database one way and the other, or by a slow link to its database, in turn); needs --postgres own, root, ip and nft")
	flag.IntVar(&c.Hosts, "hosts", 0, "how many hosts serve at once, on --postgres (default 1)")
	flag.IntVar(&c.Workers, "workers", 0, "run every activity in `N` worker processes outside the hosts, killed too, instead of in the modules (default 0: in the modules)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "crashtest: unexpected arguments %q; every option is a flag (crashtest -h lists them)\n", flag.Args())
		return 2
	}
	defer guestbuild.Cleanup()
	if c.Postgres != "" {
		base, how := c.Postgres, "--postgres"
		switch base {
		case "auto":
			var err error
			if base, how, err = pgtest.Find(); err != nil {
				fmt.Fprintln(os.Stderr, "crashtest:", err)
				return 2
			}
			defer pgtest.Stop()
		case "own":
			var opts pgtest.ClusterOptions
			if c.Partitions > 0 {
				lab, err := torture.NewNetlab(c.Hosts)
				if err != nil && os.Getenv(envRequireNetns) != "" {
					fmt.Fprintf(os.Stderr, "crashtest: partitions cannot run: %v ($%s is set, so this fails rather than skips)\n", err, envRequireNetns)
					return 2
				}
				if err != nil {
					// Said, and not a failure: where namespaces are not
					// permitted, there is nothing to run.
					fmt.Printf("crashtest: partitions skipped: %v\n", err)
					return 0
				}
				defer lab.Close()
				c.Net, opts = lab, pgtest.ClusterOptions{Listen: lab.DatabaseIPs(), Trust: lab.Network()}
			}
			db, err := pgtest.StartCluster(opts)
			if err != nil {
				fmt.Fprintln(os.Stderr, "crashtest:", err)
				return 2
			}
			defer db.Stop()
			c.DB, base, how = db, db.URL(), "a throwaway cluster of the run's own"
		}
		url, drop, err := pgtest.NewSchema(base)
		if err != nil {
			fmt.Fprintln(os.Stderr, "crashtest:", err)
			return 2
		}
		defer drop()
		fmt.Printf("crashtest: PostgreSQL from %s, in a schema of its own\n", how)
		c.Postgres = url
	}
	r, err := torture.Run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		return 2
	}
	fmt.Println(r.Summary())
	if len(r.Violations) > 0 {
		return 1
	}
	return 0
}
