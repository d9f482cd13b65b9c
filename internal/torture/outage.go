package torture

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
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
	client := &http.Client{Timeout: 5 * time.Second}
	for i, p := range procs {
		if p == nil {
			continue
		}
		status, err := readyz(client, addrs[i])
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

// readyz asks the host at addr whether it is ready, and returns the status
// it answered.
func readyz(client *http.Client, addr string) (int, error) {
	req, err := http.NewRequestWithContext(context.Background(), "GET", "http://"+addr+"/readyz", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
