package oddstore

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
)

// odd is an instance made odd, and what the host must make of it.
type odd struct {
	id string
	// edit makes the instance odd, once the store is closed; an error
	// means the database refused to hold it.
	edit func(ctx context.Context, b *builder) error
	// want is the status the host must bring the instance to, and reason
	// a text its failure must then hold; empty: whatever it makes of it.
	want   engine.Status
	reason string
	// gone says the instance is no longer there under id (edit renamed
	// or deleted it).
	gone bool
	// unreadable says its history cannot be read: GET …/history answers
	// an error, as JSON, that says why.
	unreadable bool
	// damages, when set, is the instance whose rows the edit leaves
	// breaking the store's invariants: a check of the database (durabox
	// check-db) names it.
	damages string
}

// at is the time odd events say they happened.
var at = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// event is the JSON of an event, as a store holds it.
func event(ev engine.Event) []byte {
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	return b
}

// next inserts the event after the last of id's history, with payload,
// and makes it the last.
func (b *builder) next(ctx context.Context, id string, skip int64, kind string, payload func(n int64) []byte) error {
	n := b.length[id] + 1 + skip
	if err := b.raw.InsertEvent(ctx, id, 1, n, kind, payload(n)); err != nil {
		return err
	}
	return b.raw.Exec(ctx, `UPDATE instances SET last_event_id = $1 WHERE id = $2`, n, id)
}

// set sets one column of an instance's row.
func (b *builder) set(ctx context.Context, id, column string, value any) error {
	return b.raw.Exec(ctx, `UPDATE instances SET `+column+` = $1 WHERE id = $2`, value, id)
}

// notUTF8 is a text that is not UTF-8 and holds a NUL and control
// characters; controls is UTF-8 with control characters, a terminal's
// escape and a right-to-left override, which PostgreSQL holds too.
const (
	notUTF8  = "na\xffme\x00with\x01\x1b[31mcontrol"
	controls = "ctl\x01\x07\x1b[2J\u202eevil"
)

// The instances Run makes odd: those that wait (Approvals, with an
// "Approval" event raised for them when they must run a turn), those
// that completed (Greetings), and those not yet begun.
var (
	waiting = []odd{
		{id: "undecodable-event", damages: "undecodable-event", want: engine.StatusFailed, reason: "event 7 does not decode", unreadable: true, edit: func(ctx context.Context, b *builder) error {
			return b.next(ctx, "undecodable-event", 0, "ExternalEvent", func(int64) []byte { return []byte(`{"id": 5, "kind": "Exter`) })
		}},
		{id: "unknown-kind", damages: "unknown-kind", want: engine.StatusFailed, reason: "Bogus", edit: func(ctx context.Context, b *builder) error {
			return b.next(ctx, "unknown-kind", 0, "Bogus", func(n int64) []byte { return event(engine.Event{ID: n, Kind: "Bogus", Time: at}) })
		}},
		{id: "negative-id", damages: "negative-id", want: engine.StatusFailed, reason: "its first event has id -5", edit: func(ctx context.Context, b *builder) error {
			return b.raw.InsertEvent(ctx, "negative-id", 1, -5, "ExternalSubscribed", event(engine.Event{ID: -5, Kind: engine.ExternalSubscribed, Time: at, Name: "Approval"}))
		}},
		{id: "huge-id", damages: "huge-id", want: engine.StatusFailed, reason: "corrupt", edit: func(ctx context.Context, b *builder) error {
			if err := b.raw.InsertEvent(ctx, "huge-id", 1, math.MaxInt64, "TimerFired", event(engine.Event{ID: math.MaxInt64, Kind: engine.TimerFired, Time: at, ScheduleID: 3})); err != nil {
				return err
			}
			return b.set(ctx, "huge-id", "last_event_id", int64(math.MaxInt64))
		}},
		{id: "gap", damages: "gap", want: engine.StatusFailed, reason: "corrupt", edit: func(ctx context.Context, b *builder) error {
			return b.next(ctx, "gap", 1, "ExternalSubscribed", func(n int64) []byte {
				return event(engine.Event{ID: n, Kind: engine.ExternalSubscribed, Time: at, Name: "Other"})
			})
		}},
		{id: "undecodable-message", want: engine.StatusFailed, reason: "does not decode", edit: func(ctx context.Context, b *builder) error {
			return b.raw.InsertMessage(ctx, "undecodable-message", "ExternalEvent", []byte("\x00{not json"), 0)
		}},
		{id: "unknown-message", edit: func(ctx context.Context, b *builder) error {
			return b.raw.InsertMessage(ctx, "unknown-message", "Bogus", event(engine.Event{Kind: "Bogus", Time: at}), 0)
		}},
		{id: "timer-9999", want: engine.StatusRunning, edit: func(ctx context.Context, b *builder) error {
			fire := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
			return b.raw.InsertMessage(ctx, "timer-9999", "TimerFired", event(engine.Event{Kind: engine.TimerFired, Time: at, ScheduleID: 6, FireAt: &fire}), math.MaxInt64)
		}},
		{id: "timer-1970", edit: func(ctx context.Context, b *builder) error {
			fire := time.Unix(0, 0).UTC()
			return b.raw.InsertMessage(ctx, "timer-1970", "TimerFired", event(engine.Event{Kind: engine.TimerFired, Time: fire, ScheduleID: 6, FireAt: &fire}), 0)
		}},
		// Visible before any timer could be due: the stores never deliver
		// it.
		{id: "event-before-1970", edit: func(ctx context.Context, b *builder) error {
			return b.raw.InsertMessage(ctx, "event-before-1970", "ExternalEvent",
				event(engine.Event{Kind: engine.ExternalEvent, Time: time.Unix(-1e9, 0), Name: "Approval", Input: json.RawMessage(`{"approved":true,"by":"1938"}`)}), math.MinInt64)
		}},
		{id: "custom-status-not-utf8", want: engine.StatusRunning, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "custom-status-not-utf8", "custom_status", notUTF8)
		}},
		{id: "custom-status-controls", want: engine.StatusRunning, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "custom-status-controls", "custom_status", controls)
		}},
		{id: "huge-custom-status", want: engine.StatusRunning, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "huge-custom-status", "custom_status", strings.Repeat("status ", 1<<20/7))
		}},
		{id: "waits-not-json", want: engine.StatusRunning, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "waits-not-json", "waits", []byte("{not json \xff"))
		}},
		{id: "unknown-status", edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "unknown-status", "status", "Sleepwalking")
		}},
		{id: "execution-negative", damages: "execution-negative", want: engine.StatusFailed, reason: "executions are numbered from 1", unreadable: true, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "execution-negative", "execution_id", int64(-1))
		}},
		{id: "task-without-module", edit: func(ctx context.Context, b *builder) error {
			return b.task(ctx, "task-without-module", strings.Repeat("e", 64), "Notify")
		}},
		{id: "task-name-not-utf8", edit: func(ctx context.Context, b *builder) error {
			return b.task(ctx, "task-name-not-utf8", b.modules[approval], notUTF8)
		}},
		{id: "task-name-controls", edit: func(ctx context.Context, b *builder) error {
			return b.task(ctx, "task-name-controls", b.modules[approval], controls)
		}},
	}
	// raised are the waiting instances that get an event, to run a turn.
	raised    = []string{"undecodable-event", "unknown-kind", "negative-id", "huge-id", "gap", "unknown-status", "execution-negative"}
	completed = []odd{
		{id: "failure-not-json", want: engine.StatusFailed, edit: func(ctx context.Context, b *builder) error {
			if err := b.set(ctx, "failure-not-json", "failure", "{not json"); err != nil {
				return err
			}
			return b.set(ctx, "failure-not-json", "status", string(engine.StatusFailed))
		}},
		{id: "result-not-json", want: engine.StatusCompleted, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "result-not-json", "result", []byte("not json \xff\x00"))
		}},
		{id: "name-not-utf8", want: engine.StatusCompleted, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "name-not-utf8", "name", notUTF8)
		}},
		{id: "name-controls", want: engine.StatusCompleted, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "name-controls", "name", controls)
		}},
	}
	pending = []odd{
		{id: "module-row-missing", want: engine.StatusFailed, reason: "not found", edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "module-row-missing", "module_hash", strings.Repeat("f", 64))
		}},
		// A module no runtime would load is one this host cannot run: its
		// instances wait, said at start and in their warnings, as for a
		// module another host's runtime took (a host setting never fails
		// an instance).
		{id: "module-not-wasm", want: engine.StatusPending, edit: func(ctx context.Context, b *builder) error {
			return b.raw.Exec(ctx, `UPDATE modules SET wasm = $1 WHERE hash = $2`, []byte("\x00asm but garbage"), b.modules[retry])
		}},
		// The start message names the orchestration that runs.
		{id: "orchestration-not-utf8", want: engine.StatusCompleted, edit: func(ctx context.Context, b *builder) error {
			return b.set(ctx, "orchestration-not-utf8", "name", notUTF8)
		}},
		{id: "huge-input", want: engine.StatusFailed, reason: "MiB", edit: func(ctx context.Context, b *builder) error {
			input := []byte(`"` + strings.Repeat("x", 2*maxPayload) + `"`)
			start := event(engine.Event{Kind: engine.OrchestrationStarted, Time: at, Name: "Greeting", Input: input})
			if err := b.raw.Exec(ctx, `UPDATE messages SET payload = $1 WHERE instance_id = $2`, start, "huge-input"); err != nil {
				return err
			}
			return b.set(ctx, "huge-input", "input", input)
		}},
		{id: "renamed", gone: true, edit: func(ctx context.Context, b *builder) error {
			if err := b.raw.Exec(ctx, `UPDATE messages SET instance_id = $1 WHERE instance_id = $2`, oddID, "renamed"); err != nil {
				return err
			}
			return b.set(ctx, "renamed", "id", oddID)
		}},
		{id: "ghost", gone: true, damages: "no-such-instance", edit: func(ctx context.Context, b *builder) error {
			// A message and an activity task for an instance that is not
			// there.
			if err := b.raw.InsertMessage(ctx, "no-such-instance", "ExternalEvent", event(engine.Event{Kind: engine.ExternalEvent, Time: at, Name: "Approval"}), 0); err != nil {
				return err
			}
			if err := b.task(ctx, "no-such-instance", b.modules[hello], "SayHello"); err != nil {
				return err
			}
			return b.raw.Exec(ctx, `DELETE FROM instances WHERE id = $1`, "ghost")
		}},
	}
)

// maxPayload is the host's Options.MaxPayload on the odd database.
const maxPayload = 1 << 20

// oddID is the id the instance "renamed" gets: one the API would refuse.
const oddID = "odd/id with spaces, ü and %2F"

// task queues an activity task of name on module for instance, as its
// event 999 (which no history has).
func (b *builder) task(ctx context.Context, instance, module, name string) error {
	return b.raw.Exec(ctx, `INSERT INTO activity_tasks (instance_id, execution_id, module_hash, schedule_id, name, input, enqueued_at) VALUES ($1, 1, $2, 999, $3, $4, 0)`,
		instance, module, name, []byte(`"odd"`))
}
