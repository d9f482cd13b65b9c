package torture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/client"
)

// driver plays the workload's clients, one goroutine per planned
// instance: it starts the instance once its batch is released, then raises
// its events. Batches are released one per host started, so starts and
// raises go on through the kills. Any request may fail because the host
// was killed under it; the driver repeats it until a host acknowledges it.
// Repeating is safe: a start with an id that exists is refused with 409
// (the first attempt got through before the kill), and a positional event
// raised twice is taken at most once.
type driver struct {
	c       *client.Client
	planned []*expect
	// release[b] is closed when the instances of batch b may start.
	release []chan struct{}
	// released is how many batches are released.
	released int
	// retries counts requests repeated because no host answered, or one
	// answered 503.
	retries atomic.Int64

	mu sync.Mutex
	// raised lists the events acknowledged, per instance, in the order
	// they were raised.
	raised map[string][]raise
	// failures are requests the host refused, which is a violation.
	failures []string
	// answers are the answers to the updates the driver sent, by
	// instance and update id; queries counts the queries answered.
	answers map[string]map[string]api.Update
	queries int
}

// raise is an Approval event the host acknowledged.
type raise struct {
	by string
	// afterWait is whether the driver raised it after it saw the
	// instance wait for it.
	afterWait bool
}

// newDriver plans planned in batches batches.
func newDriver(c *client.Client, planned []*expect, batches int) *driver {
	d := &driver{c: c, planned: planned, raised: map[string][]raise{}, answers: map[string]map[string]api.Update{}}
	for range batches {
		d.release = append(d.release, make(chan struct{}))
	}
	return d
}

// releaseNext lets the next batch of instances start; once every batch is
// released it does nothing.
func (d *driver) releaseNext() {
	if d.released < len(d.release) {
		close(d.release[d.released])
		d.released++
	}
}

// releaseAll lets every instance start.
func (d *driver) releaseAll() {
	for d.released < len(d.release) {
		d.releaseNext()
	}
}

// drive runs every instance's client until each is done or ctx ends.
func (d *driver) drive(ctx context.Context) {
	var wg sync.WaitGroup
	for i, e := range d.planned {
		batch := i * len(d.release) / len(d.planned)
		wg.Go(func() {
			select {
			case <-d.release[batch]:
			case <-ctx.Done():
				d.fail("instance %s was never started: the run ended first", e.id)
				return
			}
			if err := d.play(ctx, e); err != nil {
				d.fail("instance %s: %v", e.id, err)
			}
		})
	}
	wg.Wait()
}

// play starts one instance and raises its events.
func (d *driver) play(ctx context.Context, e *expect) error {
	input, err := json.Marshal(e.input)
	if err != nil {
		return err
	}
	err = d.retry(ctx, func() error {
		_, err := d.c.Start(ctx, api.StartRequest{Name: e.name, Input: input, ID: e.id})
		return err
	})
	var refused *client.Error
	if errors.As(err, &refused) && refused.StatusCode == http.StatusConflict {
		err = nil // a start before a kill got through, and its answer was lost
	}
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	switch e.raise {
	case raiseApproval:
		if _, err := d.raise(ctx, e.id, byEarly, false); err != nil {
			return err
		}
		if err := d.await(ctx, e.id, func(inst api.Instance) bool {
			return strings.HasPrefix(inst.CustomStatus, "waiting for a decision") || inst.Status.IsTerminal()
		}); err != nil {
			return err
		}
		if _, err := d.raise(ctx, e.id, byWait, true); err != nil {
			return err
		}
		_, err := d.raise(ctx, e.id, byLate, true)
		return err
	case raiseAfterEnd:
		if err := d.await(ctx, e.id, func(inst api.Instance) bool { return inst.Status.IsTerminal() }); err != nil {
			return err
		}
		refused, err := d.raise(ctx, e.id, byAfter, true)
		if err == nil && !refused {
			err = errors.New("the host acknowledged an Approval raised after the instance finished; it must refuse it (409)")
		}
		return err
	case sendUpdates:
		return d.order(ctx, e)
	}
	return nil
}

// order sends an Order its updates, one after the other, each again with
// the same id until a host answers it, and checks each answer; between
// them it asks the order's Summary, which must count the lines answered.
func (d *driver) order(ctx context.Context, e *expect) error {
	var i int
	fmt.Sscanf(e.id, "order-%d", &i)
	lines := 0
	for _, up := range orderUpdates(e.id, i) {
		data, _ := json.Marshal(up.data)
		var u api.Update
		err := d.retry(ctx, func() (err error) {
			u, err = d.c.Update(ctx, e.id, api.UpdateRequest{Name: up.name, Data: data, ID: up.id})
			return err
		})
		if err != nil {
			return fmt.Errorf("update %s: %w", up.id, err)
		}
		d.mu.Lock()
		if d.answers[e.id] == nil {
			d.answers[e.id] = map[string]api.Update{}
		}
		d.answers[e.id][up.id] = u
		d.mu.Unlock()
		switch {
		case up.refused && u.State != "Refused":
			return fmt.Errorf("update %s is %s (%s); want it refused by the validator", up.id, u.State, u.Result)
		case !up.refused && (u.State != "Completed" || !sameJSON(u.Result, up.result)):
			return fmt.Errorf("update %s is %s with %s %+v; want Completed with %v", up.id, u.State, u.Result, u.Failure, up.result)
		case !up.refused && up.name == "AddLine":
			lines++
		}
		if up.name == "Submit" {
			break
		}
		var s struct{ Lines []json.RawMessage }
		err = d.retry(ctx, func() error {
			out, err := d.c.Query(ctx, e.id, "Summary", nil)
			if err == nil {
				err = json.Unmarshal(out, &s)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("query Summary after %s: %w", up.id, err)
		}
		if len(s.Lines) != lines {
			return fmt.Errorf("query Summary after %s answered %d lines; %d were added", up.id, len(s.Lines), lines)
		}
		d.mu.Lock()
		d.queries++
		d.mu.Unlock()
	}
	return nil
}

// raise raises an Approval for id until a host answers, and notes it if
// the host acknowledged it, or may have (an answer lost on the way, then
// a refusal). A host refuses an event for an instance that has finished
// (409): raise reports it did.
func (d *driver) raise(ctx context.Context, id, by string, afterWait bool) (refused bool, err error) {
	data, _ := json.Marshal(map[string]any{"approved": true, "by": by})
	var lost bool
	err = d.retry(ctx, func() error {
		err := d.c.Raise(ctx, id, api.RaiseRequest{Name: "Approval", Data: data})
		var answer *client.Error
		lost = lost || err != nil && (!errors.As(err, &answer) || answer.StatusCode == http.StatusServiceUnavailable)
		return err
	})
	var answer *client.Error
	refused = errors.As(err, &answer) && answer.StatusCode == http.StatusConflict
	if err != nil && !refused {
		return false, fmt.Errorf("raise Approval by %q: %w", by, err)
	}
	if !refused || lost {
		// Refused after a try whose answer was lost: that try may have
		// raised it before the instance finished, as one acknowledged.
		d.mu.Lock()
		d.raised[id] = append(d.raised[id], raise{by: by, afterWait: afterWait})
		d.mu.Unlock()
	}
	return refused, nil
}

// await polls instance id until ready says so.
func (d *driver) await(ctx context.Context, id string, ready func(api.Instance) bool) error {
	for {
		var inst api.Instance
		err := d.retry(ctx, func() (err error) {
			inst, err = d.c.Instance(ctx, id)
			return err
		})
		if err != nil {
			return err
		}
		if ready(inst) {
			return nil
		}
		if err := sleep(ctx, 30*time.Millisecond); err != nil {
			return fmt.Errorf("still %s, custom status %q, when the run ended", inst.Status, inst.CustomStatus)
		}
	}
}

// retry calls f until a host answers it, and returns its answer. Errors
// that are not a host's answer (a refused connection, a connection cut by
// a kill) mean there is no host right now, and a 503 (a host starting or
// stopping) says to ask again, as a real client would.
func (d *driver) retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		var answer *client.Error
		if err == nil || errors.As(err, &answer) && answer.StatusCode != http.StatusServiceUnavailable {
			return err
		}
		d.retries.Add(1)
		if sleep(ctx, 20*time.Millisecond) != nil {
			return fmt.Errorf("no host answered before the run ended; the last error: %w", err)
		}
	}
}

func (d *driver) fail(format string, args ...any) {
	d.mu.Lock()
	d.failures = append(d.failures, fmt.Sprintf(format, args...))
	d.mu.Unlock()
}

// sleep waits for t or until ctx ends.
func sleep(ctx context.Context, t time.Duration) error {
	timer := time.NewTimer(t)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
