package torture

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/durabox/durabox/internal/pgtest"
)

// downHows are the ways the database goes down, in turn.
var downHows = []string{pgtest.Fast, pgtest.Immediate, pgtest.Kill}

// outage takes the database down, the next way of downHows, for 200ms to
// 1.5s while the hosts (procs, serving on addrs) go on, and brings it
// back. While it is down, every host must answer 503 on /readyz, and none
// may exit; fail is told of each that does not.
func outage(db *pgtest.Cluster, addrs []string, procs []*hostProc, rng *rand.Rand, r *Report, fail func(format string, args ...any)) error {
	how := downHows[r.DBRestarts%len(downHows)]
	if err := db.Down(how); err != nil {
		return fmt.Errorf("take the database down (%s): %w", how, err)
	}
	back := time.Now().Add(200*time.Millisecond + time.Duration(rng.Int64N(int64(1300*time.Millisecond))))
	for i, p := range procs {
		if p == nil {
			continue
		}
		status, err := readyz(addrs[i])
		switch {
		case err != nil:
			fail("database down (%s): host %d did not answer /readyz: %v", how, i, err)
		case status != http.StatusServiceUnavailable:
			fail("database down (%s): host %d answered %d on /readyz; want 503", how, i, status)
		default:
			r.NotReady++
		}
		r.ReadyAsked++
	}
	time.Sleep(time.Until(back))
	if err := db.Up(); err != nil {
		return fmt.Errorf("start the database again after it went down (%s): %w", how, err)
	}
	for i, p := range procs {
		if p == nil {
			continue
		}
		select {
		case <-p.exited:
			fail("database down (%s): host %d exited; a host must wait for its database", how, i)
			procs[i] = nil // started again with the others
		default:
		}
	}
	r.DBRestarts++
	r.DBDown[how]++
	return nil
}

// probe asks the hosts whether they are ready; a host cut off from its
// clients does not answer it.
var probe = &http.Client{Timeout: 5 * time.Second}

// readyz asks the host at addr whether it is ready, and returns the status
// it answered.
func readyz(addr string) (int, error) {
	resp, err := probe.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// partition cuts one of the hosts that serve (procs, on addrs) off for 1
// to 15 seconds (longer than its 10s lease, half the time) while the
// others go on, then heals it: in turn from its database (it must answer
// 503 on /readyz meanwhile), from everything, from its database one way
// and then the other (503 too), and by a slow link to its database (200 to
// 800ms each way). The host must not
// exit, and must answer ready on /readyz within a minute of the heal; fail
// is told when it does not. A host not ready yet (it was started again
// after a kill and still loads its modules, which takes long on a loaded
// machine) is not cut: it is tried at the next kill.
func partition(n *Netlab, links []*slowLink, addrs []string, procs []*hostProc, rng *rand.Rand, r *Report, fail func(format string, args ...any)) error {
	i := rng.IntN(len(procs))
	if procs[i] == nil {
		return nil
	}
	if status, err := readyz(addrs[i]); err != nil || status != http.StatusOK {
		return nil
	}
	how := cuts[r.Partitions%len(cuts)]
	what := how.String()
	if how == slowDatabase {
		latency := 200*time.Millisecond + time.Duration(rng.Int64N(int64(600*time.Millisecond)))
		what = fmt.Sprintf("%s (%s each way)", what, latency)
		links[i].setLatency(latency)
	} else if err := n.Cut(i, how); err != nil {
		return fmt.Errorf("cut host %d off from %s: %w", i, what, err)
	}
	cut := time.Second + time.Duration(rng.Int64N(int64(14*time.Second)))
	healAt := time.Now().Add(cut)
	if how != fromEverything && how != slowDatabase {
		status, err := readyz(addrs[i])
		switch {
		case err != nil:
			fail("partition: host %d, cut off from %s, did not answer /readyz: %v", i, what, err)
		case status != http.StatusServiceUnavailable:
			fail("partition: host %d, cut off from %s, answered %d on /readyz; want 503", i, what, status)
		default:
			r.NotReady++
		}
		r.ReadyAsked++
	}
	time.Sleep(time.Until(healAt))
	links[i].setLatency(0)
	if err := n.Heal(i); err != nil {
		return fmt.Errorf("heal host %d: %w", i, err)
	}
	r.Partitions++
	r.LongestCut = max(r.LongestCut, cut)
	select {
	case <-procs[i].exited:
		fail("partition: host %d exited while it was cut off from %s for %s; a host must wait for its network", i, what, cut.Round(time.Millisecond))
		procs[i] = nil // started again with the others
		return nil
	default:
	}
	for deadline := time.Now().Add(time.Minute); ; {
		status, err := readyz(addrs[i])
		if err == nil && status == http.StatusOK {
			r.Heals++
			return nil
		}
		if time.Now().After(deadline) {
			fail("partition: host %d was not ready a minute after its links came back (cut off from %s for %s): %d, %v", i, what, cut.Round(time.Millisecond), status, err)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// overTCP is the database URL u reached over TCP at addr, instead of the
// socket it names.
func overTCP(u, addr string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	q.Del("host")
	q.Del("port")
	p.Host, p.RawQuery = addr, q.Encode()
	return p.String()
}
