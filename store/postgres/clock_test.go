package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/durabox/durabox/internal/pgtest"
)

// TestClockFollowsTheServer: a host whose clock is 90 seconds ahead, or
// behind, of the server's measures the offset, and its Clock tells the
// server's time, whatever its own says.
func TestClockFollowsTheServer(t *testing.T) {
	t.Parallel()
	s, err := Open(pgtest.Schema(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, skew := range []time.Duration{90 * time.Second, -90 * time.Second} {
		c := NewClock(s, func() time.Time { return time.Now().Add(skew) })
		if got := c.Now().Sub(time.Now()); (got - skew).Abs() > time.Second {
			t.Fatalf("before measuring, Now is %s off the machine's clock; want the host's own (%s)", got, skew)
		}
		rtt, err := c.Measure(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The server runs on this machine: its clock is the machine's.
		if got := c.Now().Sub(time.Now()); got.Abs() > rtt+100*time.Millisecond {
			t.Errorf("a host %s off measured offset %s, and its Now is %s off the server's; want within the round trip (%s)", skew, c.Offset(), got, rtt)
		}
	}
}
