package torture

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/durabox/durabox/engine"
)

// The workload: instances of the example orchestrations and of the tally
// module, each with what it must end with and how many of each step its
// histories must hold, so that a lost or doubled step shows.

// modules are the packages the workload deploys, relative to the
// repository's root.
var modules = []string{
	"examples/wasm/hello", "examples/wasm/retry", "examples/wasm/fanout", "examples/wasm/parentchild",
	"examples/wasm/eternal", "examples/wasm/approval", "examples/wasm/order", "internal/torture/testdata/tally",
}

// expect is one instance and what it must end with.
type expect struct {
	id, name string
	input    any
	// result is what the instance must complete with. An approved
	// Approval's result names whoever approved it, which depends on which
	// raised event it took: approved is set instead, and check works the
	// result out from the history.
	result   any
	approved string
	// executions is how many executions it must have (continue-as-new
	// makes more than one).
	executions int64
	// steps counts, over every execution, the events of each kind in
	// countedKinds it must have; a kind missing here must not occur.
	steps map[engine.EventKind]int
	// raise says which events the driver raises for it.
	raise raisePlan
}

// countedKinds are the kinds of event whose number check compares with
// expect.steps.
var countedKinds = []engine.EventKind{
	engine.ActivityScheduled, engine.TimerCreated, engine.SubOrchestrationScheduled,
	engine.OrchestrationChained, engine.ExternalSubscribed, engine.ExternalEvent,
	engine.UpdateAccepted, engine.UpdateCompleted, engine.ExternalEventSent, engine.ExternalSubscribedPersistent, engine.ExternalEventPersistent,
}

// raisePlan is what the driver raises for an Approval instance.
type raisePlan int

const (
	// raiseNothing raises no event.
	raiseNothing raisePlan = iota
	// raiseApproval raises an Approval right after the start (usually
	// before the wait, so dropped), another once the instance waits for
	// it (taken, unless the first was), and a third after that one
	// (dropped: the wait is gone; or refused, if the instance finished).
	raiseApproval
	// raiseAfterEnd raises an Approval once the instance has finished,
	// which the host must refuse (409).
	raiseAfterEnd
	// sendUpdates sends an Order its updates (orderUpdates) one after the
	// other, each until a host answers it, and asks its Summary between
	// them.
	sendUpdates
)

// orderUpdate is an update the driver sends an Order, by the id that
// makes a retried one run once, and the answer it must get: a result, or
// a refusal.
type orderUpdate struct {
	id, name string
	data     any
	// result is the answer of an update that completes; refused, one the
	// order's validator refuses, which leaves no trace in history.
	result  any
	refused bool
}

// orderUpdates returns what the driver sends the Order of order id i:
// two lines (the second after a line its validator refuses), then Submit.
func orderUpdates(id string, i int) []orderUpdate {
	q := 1 + i%3
	return []orderUpdate{
		{id: id + "/line-1", name: "AddLine", data: map[string]any{"sku": "A-" + fmt.Sprint(i), "qty": q}, result: 250 * q},
		{id: id + "/bad", name: "AddLine", data: map[string]any{"sku": "B-" + fmt.Sprint(i), "qty": 0}, refused: true},
		{id: id + "/line-2", name: "AddLine", data: map[string]any{"sku": "B-" + fmt.Sprint(i), "qty": 2}, result: 250 * (q + 2)},
		{id: id + "/submit", name: "Submit", result: fmt.Sprintf("receipt-%d", 250*(q+2))},
	}
}

// Who approves, in the Approval events the driver raises, by when it
// raises them.
const (
	byEarly = "someone early"
	byWait  = "the approver"
	byLate  = "someone late"
	byAfter = "someone after the end"
)

// tallyKeys is how many Mark activities a Tally instance runs at once (one
// more runs after its sleep).
const tallyKeys = 4

// hops is how many events a Relay raises at the Collector it starts.
const hops = 3

// plan returns the instances to start, scale of each kind, in the order to
// start them: the kinds interleaved.
func plan(scale int) []*expect {
	var out []*expect
	for i := range scale {
		item := fmt.Sprint("order ", i)
		var keys []string
		for k := range tallyKeys {
			keys = append(keys, fmt.Sprintf("tally-%d/%d", i, k))
		}
		docs := []string{"one two three", strings.Repeat("word ", 5*(i%4+1)), "last"}
		out = append(out,
			&expect{id: fmt.Sprint("hello-", i), name: "Greeting", input: fmt.Sprint("world ", i),
				result: fmt.Sprintf("Hello, world %d!", i), executions: 1, steps: steps(1, 0)},
			&expect{id: fmt.Sprint("retry-", i), name: "Retry", input: map[string]any{"attempts": 3, "failures": 1, "delay": "150ms", "workMillis": 40},
				result: "succeeded on attempt 2", executions: 1, steps: steps(2, 1)},
			&expect{id: fmt.Sprint("fanout-", i), name: "WordCount", input: docs,
				result: 3 + 5*(i%4+1) + 1, executions: 1, steps: steps(len(docs), 0)},
			&expect{id: fmt.Sprint("parent-", i), name: "Parent", input: []string{fmt.Sprint("box ", i), fmt.Sprint("crate ", i)},
				result: fmt.Sprintf("box %d shipped; crate %d shipped", i, i), executions: 1,
				steps: map[engine.EventKind]int{engine.SubOrchestrationScheduled: 2, engine.OrchestrationChained: 1}},
			&expect{id: fmt.Sprint("heartbeat-", i), name: "Heartbeat", input: map[string]any{"round": 0, "rounds": 4, "every": "250ms"},
				result: "stopped after 4 rounds", executions: 4, steps: steps(4, 3)},
			&expect{id: fmt.Sprint("approve-", i), name: "Approval", input: map[string]string{"item": item, "timeout": "1h"},
				approved: item, executions: 1, raise: raiseApproval,
				steps: waits(steps(2, 1), 1)},
			&expect{id: fmt.Sprint("expire-", i), name: "Approval", input: map[string]string{"item": item, "timeout": "300ms"},
				result: item + ": no decision in 300ms, request expired", executions: 1, raise: raiseAfterEnd,
				steps: waits(steps(2, 1), 0)},
			&expect{id: fmt.Sprint("order-", i), name: "Order", input: fmt.Sprint("c-", i), raise: sendUpdates, executions: 1,
				result: map[string]any{"customer": fmt.Sprint("c-", i), "status": "paid", "cents": 250 * (3 + i%3), "receipt": fmt.Sprintf("receipt-%d", 250*(3+i%3)),
					"lines": []map[string]any{{"sku": fmt.Sprint("A-", i), "qty": 1 + i%3, "cents": 250 * (1 + i%3)}, {"sku": fmt.Sprint("B-", i), "qty": 2, "cents": 500}}},
				steps: map[engine.EventKind]int{engine.ActivityScheduled: 3, engine.TimerCreated: 1, engine.UpdateAccepted: 3, engine.UpdateCompleted: 3}},
			&expect{id: fmt.Sprint("relay-", i), name: "Relay", input: map[string]any{"to": fmt.Sprint("collector-", i), "n": hops},
				result: hops, executions: 1, steps: map[engine.EventKind]int{engine.OrchestrationChained: 1, engine.ExternalEventSent: hops}},
			&expect{id: fmt.Sprint("tally-", i), name: "Tally", input: map[string]any{"keys": keys, "pause": "100ms", "workMillis": 30},
				result: tallyKeys + 1, executions: 1, steps: steps(tallyKeys+1, 1)},
		)
	}
	return out
}

// steps returns the counts of an instance with activities activities and
// timers timers.
func steps(activities, timers int) map[engine.EventKind]int {
	return map[engine.EventKind]int{engine.ActivityScheduled: activities, engine.TimerCreated: timers}
}

// waits adds one wait for an event to s, and taken events that it took.
func waits(s map[engine.EventKind]int, taken int) map[engine.EventKind]int {
	s[engine.ExternalSubscribed], s[engine.ExternalEvent] = 1, taken
	return s
}

// childOf returns what an instance that a Parent started must end with,
// from its name and input.
func childOf(id, name string, input json.RawMessage) (*expect, error) {
	switch name {
	case "Ship":
		var parcel string
		if err := json.Unmarshal(input, &parcel); err != nil {
			return nil, fmt.Errorf("a Ship child's input %s is not a parcel: %w", input, err)
		}
		return &expect{id: id, name: name, result: parcel + " shipped", executions: 1, steps: steps(1, 0)}, nil
	case "Audit":
		var n int
		if err := json.Unmarshal(input, &n); err != nil {
			return nil, fmt.Errorf("an Audit child's input %s is not a number: %w", input, err)
		}
		return &expect{id: id, name: name, result: fmt.Sprintf("audited an order of %d parcels", n), executions: 1, steps: steps(0, 0)}, nil
	case "Collector":
		return &expect{id: id, name: name, result: hops * (hops + 1) / 2, executions: 1,
			steps: map[engine.EventKind]int{engine.ExternalSubscribedPersistent: hops, engine.ExternalEventPersistent: hops}}, nil
	}
	return nil, fmt.Errorf("no instance of %s was expected", name)
}
