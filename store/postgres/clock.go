package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// Clock is the database server's clock as a host sees it: the host's own
// clock corrected by the offset it last measured to the server's. Hosts on
// one database whose own clocks disagree agree on it, to within half the
// round trip of a measurement, so that a lease one host gives is not found
// ended early by another whose clock runs ahead, nor a timer fired early
// there: every time a host passes the store (leases, timers, retries) is on
// the server's clock.
type Clock struct {
	s     *Store
	local func() time.Time
	// offset is what Now adds to local, in nanoseconds.
	offset atomic.Int64
}

// NewClock returns the server's clock as seen from local, the host's own
// clock, which it follows with no offset until Measure measures one.
func NewClock(s *Store, local func() time.Time) *Clock {
	return &Clock{s: s, local: local}
}

// Now is the server's time: local's, plus the offset last measured.
func (c *Clock) Now() time.Time { return c.local().Add(c.Offset()) }

// Offset is how far the server's clock is ahead of local's (behind, when
// negative), as last measured.
func (c *Clock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// measurements is how many times Measure asks the server for its time; it
// keeps the answer of the shortest round trip, the least uncertain.
const measurements = 3

// Measure asks the server for its time, sets the offset by the answer that
// came back soonest (the server's time against the middle of local's
// times before and after asking), and returns that round trip.
func (c *Clock) Measure(ctx context.Context) (rtt time.Duration, err error) {
	if c.s.closed.Load() {
		return 0, errClosed
	}
	best := time.Duration(-1)
	var offset time.Duration
	for range measurements {
		before := c.local()
		var server time.Time
		if err := c.s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&server); err != nil {
			return 0, fmt.Errorf("postgres: read the server's clock: %w", err)
		}
		after := c.local()
		if took := after.Sub(before); best < 0 || took < best {
			best, offset = took, server.Sub(before.Add(took/2))
		}
	}
	c.offset.Store(int64(offset))
	return best, nil
}

// Follow measures the offset every interval until ctx ends, and logs
// when it finds this host's clock more than a second off the server's,
// and when it cannot read the server's (it keeps the last offset then).
func (c *Clock) Follow(ctx context.Context, interval time.Duration, log *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		before := c.Offset()
		if _, err := c.Measure(ctx); err != nil {
			if ctx.Err() == nil && !errors.Is(err, errClosed) {
				log.Warn("the database server's clock cannot be read; the host goes on with the offset it measured last", "offset", before, "err", err)
			}
			continue
		}
		if after := c.Offset(); (after - before).Abs() > time.Second {
			c.Log(log)
		}
	}
}

// Log says, when this host's clock is more than a second off the
// server's, by how much, and that the host follows the server's.
func (c *Clock) Log(log *slog.Logger) {
	offset := c.Offset()
	if offset.Abs() <= time.Second {
		return
	}
	how := "behind"
	if offset < 0 {
		how = "ahead of"
	}
	log.Warn(fmt.Sprintf("this host's clock is %s %s the database server's; its leases and timers follow the server's clock", offset.Abs().Round(time.Millisecond), how), "offset", offset)
}
