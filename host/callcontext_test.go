package host

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The context of a call into a guest ends as context.WithDeadline's would:
// at its deadline, or when its parent ends, whichever is first; its Done
// channel, made only when asked for, agrees with Err.
func TestCallContext(t *testing.T) {
	t.Parallel()
	closed := func(c context.Context) bool {
		select {
		case <-c.Done():
			return true
		default:
			return false
		}
	}
	t.Run("past its deadline", func(t *testing.T) {
		c := &callContext{Context: context.Background(), deadline: time.Now().Add(-time.Millisecond)}
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err before Done was asked for: %v, want DeadlineExceeded", err)
		}
		if !closed(c) || !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("Done closed: %v, Err %v; want closed, DeadlineExceeded", closed(c), c.Err())
		}
		c.stop()
	})
	t.Run("before its deadline", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		c := &callContext{Context: parent, deadline: time.Now().Add(time.Hour)}
		if c.Err() != nil {
			t.Fatalf("Err an hour before the deadline: %v", c.Err())
		}
		if d, ok := c.Deadline(); !ok || !d.Equal(c.deadline) {
			t.Fatalf("Deadline %v, %v; want %v", d, ok, c.deadline)
		}
		cancel()
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("Err once the parent is cancelled: %v, want Canceled", c.Err())
		}
		if !closed(c) {
			t.Fatal("Done is open though the parent is cancelled")
		}
		c.stop()
	})
	t.Run("with Done asked for first", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		c := &callContext{Context: parent, deadline: time.Now().Add(time.Hour)}
		if closed(c) || c.Err() != nil {
			t.Fatalf("an hour before the deadline: Done closed %v, Err %v", closed(c), c.Err())
		}
		cancel()
		<-c.Done()
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("Err once the parent is cancelled: %v, want Canceled", c.Err())
		}
		c.stop()
	})
	t.Run("a parent with an earlier deadline", func(t *testing.T) {
		early := time.Now().Add(time.Minute)
		parent, cancel := context.WithDeadline(context.Background(), early)
		defer cancel()
		c := &callContext{Context: parent, deadline: early.Add(time.Hour)}
		if d, _ := c.Deadline(); !d.Equal(early) {
			t.Fatalf("Deadline %v, want the parent's %v", d, early)
		}
	})
}
