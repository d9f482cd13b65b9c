// Command fulfil is an orchestration whose activities run outside the
// host, in workers (package worker; examples/worker runs them): Fulfil
// records an order in a database and publishes an event about it, which
// no activity in the sandbox could do. Transcode calls a long activity
// that sends heartbeats, so that a lost worker is noticed within seconds
// and the next attempt resumes where the last heartbeat left it. Race
// calls a slow activity against a timer: when the timer wins, the
// activity's result is no longer wanted, and the worker running it is told
// so through its next heartbeat.
package main

import (
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Fulfil", Fulfil)
	durabox.RegisterOrchestration("Transcode", Transcode)
	durabox.RegisterOrchestration("Race", Race)
}

// The task queues of the workers.
const (
	OrdersQueue = "orders"
	EventsQueue = "events"
	MediaQueue  = "media"
)

// Order is an order to fulfil.
type Order struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Cents    int    `json:"cents"`
}

// Receipt is what Fulfil returns: the order's row in the database and its
// event's id in the stream.
type Receipt struct {
	Row   int64  `json:"row"`
	Event string `json:"event"`
}

// Fulfil records order (RecordOrder, on the orders queue) and publishes
// that it was (PublishOrder, on the events queue).
func Fulfil(ctx *durabox.Context, order Order) (Receipt, error) {
	row, err := durabox.Call[int64](ctx, "RecordOrder", order, durabox.OnQueue(OrdersQueue))
	if err != nil {
		return Receipt{}, err
	}
	event, err := durabox.Call[string](ctx, "PublishOrder", order, durabox.OnQueue(EventsQueue))
	if err != nil {
		return Receipt{}, err
	}
	return Receipt{Row: row, Event: event}, nil
}

// Video is a video to transcode, in Frames frames.
type Video struct {
	Name   string `json:"name"`
	Frames int    `json:"frames"`
}

// Transcode transcodes a video with the TranscodeVideo activity, which
// must send a heartbeat at least every two seconds.
func Transcode(ctx *durabox.Context, v Video) (string, error) {
	return durabox.Call[string](ctx, "TranscodeVideo", v, durabox.OnQueue(MediaQueue), durabox.WithHeartbeatTimeout(2*time.Second))
}

// Race calls SlowReport against a timer of the given length and returns
// which won; a report that loses is cancelled.
func Race(ctx *durabox.Context, after time.Duration) (string, error) {
	report := ctx.CallActivity("SlowReport", after, durabox.OnQueue(MediaQueue))
	timer := ctx.NewTimer(after)
	if ctx.Select(report, timer) == 1 {
		return "timer", nil
	}
	var out string
	return out, report.Get(&out)
}
func main() {}
