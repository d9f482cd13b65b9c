package engine

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/abi"
)

// The golden corpus: recorded histories under testdata/golden, each
// replayed on a guest (the code that wrote it, or changed code) and the
// replay described exactly: every activation the engine sent, the commands
// the guest answered, and how the replay ended (the status, or the exact
// nondeterminism error). Run with -update to record the histories and
// write the descriptions again; otherwise the stored histories are
// replayed, as a host replays histories an older Durabox wrote.

var update = flag.Bool("update", false, "record the golden corpus under testdata/golden again")

// program is orchestration code for the fake guest.
type program struct {
	name   string
	handle func(*fakeGuest, abi.Job) []abi.Command
}

// gstep is one turn of the recording host.
type gstep struct {
	now      time.Time
	messages []Event
	// code, when set, is the code the instance runs on from this turn on.
	code *program
	// host are events the host records before the turn, between two steps
	// (a move).
	host []Event
	// resetTo, when set, resets the execution to that event before the
	// turn, which then begins with the reset marker.
	resetTo int64
}

// scenario records a history and replays it.
type scenario struct {
	name string
	code program
	// steps are the recording's turns.
	steps []gstep
	// edit, when set, damages the recorded history: a deliberately bad one.
	edit func([]Event) []Event
	// replay is the code the history is replayed on; nil means the code
	// that recorded its last turn.
	replay *program
}

// The programs. The steps they count are state, never command numbers:
// a Patch command takes a number too.
var (
	helloCode   = program{"hello", hello}
	retryCode   = program{"retry", retry}
	selectCode  = program{"select a result or a timeout", selectTimeout}
	waitCode    = program{"wait for X, with a timeout, then again", raceThenWait(false)}
	mailboxCode = program{"wait for a persistent X, with a timeout, then again", raceThenWait(true)}
	// mailboxesCode selects between persistent waits for A and B.
	mailboxesCode = program{"after go, the first of persistent A and B, then the other", firstOfTwoMailboxes}
	// charge checks, then charges 1; the patched code charges 2 on new
	// steps, and the code that dropped the patch charges 2 always.
	chargeCode      = program{"charge 1", charge(func(*fakeGuest) (string, []abi.Command) { return "1", nil })}
	patchedCode     = program{"charge 2 if patched", charge(patchedPrice)}
	patchlessCode   = program{"charge 2", charge(func(*fakeGuest) (string, []abi.Command) { return "2", nil })}
	parentCode      = program{"parent of four children", parent}
	cancellableCode = program{"wait for approval until cancelled", approvalUntilCancelled}
	eternalCode     = program{"sleep, then continue as new", eternal}
	raiserCode      = program{"raise Ping at other and a persistent Ping at gone", raiser}
	updatesCode     = program{"wait for Done; update Add charges its argument and answers with the receipt", updates}
	retryPolicyCode = program{"charge with a retry policy; fail with its failure", chargeRetried(chargePolicy)}
	attributesCode  = emitting("tag the order and complete", setAttributes(`{"customer":{"string":"c-42"},"old":null}`), abi.Command{Kind: abi.CommandComplete, Output: []byte(`"done"`)})
	refusingCode    = program{"refuse every update", func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobUpdate {
			return []abi.Command{refuse(j.UpdateID, "closed")}
		}
		return updates(nil, j)
	}}
)

// updates waits for the event Done, and completes on it; its update Add
// refuses a negative argument, and charges any other, answering with the
// charge's receipt.
func updates(_ *fakeGuest, j abi.Job) []abi.Command {
	switch j.Kind {
	case abi.JobStart:
		return []abi.Command{wait("Done")}
	case abi.JobUpdate:
		if strings.HasPrefix(string(j.Input), "-") {
			return []abi.Command{refuse(j.UpdateID, "a negative amount")}
		}
		return []abi.Command{activity("Charge", string(j.Input))}
	case abi.JobResolveActivity:
		return []abi.Command{{Kind: abi.CommandCompleteUpdate, UpdateID: "u1", Output: j.Result}}
	case abi.JobResolveEvent:
		return []abi.Command{complete(`"done"`)}
	}
	return nil
}

// chargePolicy is the retry policy of retryPolicyCode's call.
var chargePolicy = &abi.RetryPolicy{MaximumAttempts: 3, InitialIntervalMillis: 1000, BackoffThousandths: 1500, NonRetryable: []string{"Declined"}}

// chargeRetried charges 5 with the retry policy p, and ends as the call
// did.
func chargeRetried(p *abi.RetryPolicy) func(*fakeGuest, abi.Job) []abi.Command {
	return func(_ *fakeGuest, j abi.Job) []abi.Command {
		switch {
		case j.Kind == abi.JobStart:
			return []abi.Command{withRetry(activity("Charge", `5`), p)}
		case j.Failure != nil:
			return []abi.Command{fail(fmt.Sprintf("%s after %d attempts", j.Failure.Message, j.Attempts))}
		}
		return []abi.Command{complete(string(j.Result))}
	}
}

// refuse is a RejectUpdate of update id, for why.
func refuse(id, why string) abi.Command {
	return abi.Command{Kind: abi.CommandRejectUpdate, UpdateID: id, Failure: &abi.Failure{Message: why}}
}

// raiser raises two events and completes with what became of each.
func raiser(g *fakeGuest, j abi.Job) []abi.Command {
	switch j.Kind {
	case abi.JobStart:
		return []abi.Command{raiseAt("other", "Ping", false), raiseAt("gone", "Ping", true)}
	case abi.JobResolveRaise:
		g.state["resolved"]++
		if j.Failure != nil {
			g.state["failed"]++
		}
		if g.state["resolved"] == 2 {
			return []abi.Command{complete(fmt.Sprintf(`{"failed":%d}`, g.state["failed"]))}
		}
	}
	return nil
}

// raiseAt is a Raise of the event name, with data 1, at instance id.
func raiseAt(id, name string, persistent bool) abi.Command {
	return abi.Command{Kind: abi.CommandRaise, InstanceID: id, Name: name, Input: []byte(`1`), Persistent: persistent}
}

func charge(price func(*fakeGuest) (string, []abi.Command)) func(*fakeGuest, abi.Job) []abi.Command {
	return func(g *fakeGuest, j abi.Job) []abi.Command {
		g.state["step"]++
		switch g.state["step"] {
		case 1:
			return []abi.Command{activity("Check", string(j.Input))}
		case 2:
			p, cmds := price(g)
			return append(cmds, activity("Charge", p))
		}
		return []abi.Command{complete(string(j.Result))}
	}
}

func patchedPrice(g *fakeGuest) (string, []abi.Command) {
	if ok, cmds := g.patched("price"); ok {
		return "2", cmds
	}
	return "1", nil
}

func parent(g *fakeGuest, j abi.Job) []abi.Command {
	switch j.Kind {
	case abi.JobStart:
		return []abi.Command{
			{Kind: abi.CommandStartChild, Name: "A", Input: []byte(`1`)},
			{Kind: abi.CommandStartChild, Name: "Audit", Input: []byte(`2`), Detached: true},
			{Kind: abi.CommandStartChild, Name: "B", Input: []byte(`3`)},
			{Kind: abi.CommandStartChild, Name: "C", Input: []byte(`4`), InstanceID: "named"},
			timer(time.Minute),
		}
	case abi.JobFireTimer:
		return []abi.Command{{Kind: abi.CommandCancelChild, Target: 4}, complete(`"done"`)}
	}
	return nil
}

func approvalUntilCancelled(g *fakeGuest, j abi.Job) []abi.Command {
	switch j.Kind {
	case abi.JobStart:
		return []abi.Command{{Kind: abi.CommandSetCustomStatus, Name: "waiting for approval"}, wait("Approval")}
	case abi.JobCancel:
		return []abi.Command{{Kind: abi.CommandCancelWait, Target: 2}, fail("cancelled: " + j.Name)}
	}
	return nil
}

func eternal(g *fakeGuest, j abi.Job) []abi.Command {
	if j.Kind == abi.JobStart {
		return []abi.Command{timer(time.Hour)}
	}
	return []abi.Command{{Kind: abi.CommandContinueAsNew, Output: []byte(`{"round":2}`)}}
}

// setAttributes is a SetAttributes command of the attributes' JSON.
func setAttributes(attrs string) abi.Command {
	return abi.Command{Kind: abi.CommandSetAttributes, Input: []byte(attrs)}
}

// emitting is code that emits cmds at the start and nothing more.
func emitting(name string, cmds ...abi.Command) program {
	return program{name, func(_ *fakeGuest, j abi.Job) []abi.Command {
		if j.Kind == abi.JobStart {
			return cmds
		}
		return nil
	}}
}

// helloSteps run hello on "world" to its end.
var helloSteps = []gstep{{now: at(0), messages: []Event{started(`"world"`)}}, {now: at(1), messages: []Event{activityDone(2, `"hi"`)}}}

// chargeSteps run the charge code: started, checked, then charged.
var chargeSteps = []gstep{
	{now: at(0), messages: []Event{started(`"order-7"`)}},
	{now: at(1), messages: []Event{activityDone(2, `"ok"`)}},
	{now: at(2), messages: []Event{activityDone(3, `"charged"`)}},
}

// patchedSteps run the patched charge code, whose patch marker is event 3.
var patchedSteps = []gstep{chargeSteps[0], chargeSteps[1], {now: at(2), messages: []Event{activityDone(4, `"charged"`)}}}

func scenarios() []scenario {
	child := func(kind EventKind, schedule int64, result string) Event {
		ev := Event{Kind: kind, ScheduleID: schedule}
		if kind == SubOrchestrationFailed {
			ev.Failure = &Failure{Message: result}
		} else {
			ev.Result = json.RawMessage(result)
		}
		return ev
	}
	moved := Event{Kind: ModuleChanged, FromModule: strings.Repeat("1", 64), Module: strings.Repeat("2", 64)}
	return []scenario{
		// Every kind of event, each history replayed on the code that wrote it.
		{name: "hello", code: helloCode, steps: helloSteps},
		{name: "retry after a failure and a timer", code: retryCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`{}`)}},
			{now: at(1), messages: []Event{activityFailed(2, "flaky")}},
			{now: at(2), messages: []Event{timerFired(4, 2)}},
			{now: at(3), messages: []Event{activityDone(6, `"success"`)}},
		}},
		{name: "select: the activity wins, the timer is cancelled", code: selectCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{activityDone(2, `"fast"`)}},
			{now: at(2), messages: []Event{activityDone(5, `"next"`)}},
		}},
		{name: "select: the timer wins, the activity is cancelled", code: selectCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(5), messages: []Event{timerFired(3, 5)}},
		}},
		{name: "a positional event after a cancelled wait", code: waitCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{timerFired(3, 1)}},
			{now: at(2), messages: []Event{raised("X", `"fresh"`)}},
		}},
		{name: "a persistent event kept past a cancelled wait", code: mailboxCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{timerFired(3, 1), raisedPersistent("X", `"kept"`)}},
		}},
		{name: "a select over two persistent waits whose events wait", code: mailboxesCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{raisedPersistent("A", `"a"`), raisedPersistent("B", `"b"`), raised("go", `null`)}},
		}},
		{name: "children completed, failed, detached and cancelled", code: parentCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{child(SubOrchestrationCompleted, 2, `"a"`), child(SubOrchestrationFailed, 4, "b broke")}},
			{now: at(60), messages: []Event{timerFired(6, 60)}},
		}},
		{name: "custom status, then cancelled", code: cancellableCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{{Kind: OrchestrationCancelRequested, Reason: "withdrawn"}}},
		}},
		{name: "cancelled, as recorded before OrchestrationCanceled", code: cancellableCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{{Kind: OrchestrationCancelRequested, Reason: "withdrawn"}}},
		}, edit: func(h []Event) []Event {
			// A host before OrchestrationCanceled recorded the ending of a
			// cancelled instance as OrchestrationFailed.
			h[len(h)-1].Kind = OrchestrationFailed
			return h
		}},
		{name: "search attributes set, then completed", code: attributesCode, steps: []gstep{{now: at(0), messages: []Event{started(`null`)}}}},
		{name: "nondeterminism: a search attribute changed", code: attributesCode, steps: []gstep{{now: at(0), messages: []Event{started(`null`)}}},
			replay: ptr(emitting("tags another customer", setAttributes(`{"customer":{"string":"c-7"},"old":null}`), abi.Command{Kind: abi.CommandComplete, Output: []byte(`"done"`)}))},
		{name: "terminated while it waits", code: cancellableCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{{Kind: OrchestrationTerminated, Reason: "stuck"}}},
		}},
		{name: "continue as new", code: eternalCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`{"round":1}`)}},
			{now: at(3600), messages: []Event{timerFired(2, 3600)}},
		}},
		{name: "events raised at two instances, one delivered and one not", code: raiserCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{
				RaiseTask{ScheduleID: 2, InstanceID: "other", Name: "Ping"}.Delivered(),
				RaiseTask{ScheduleID: 3, InstanceID: "gone", Name: "Ping"}.NotDelivered("it does not exist"),
			}},
		}},
		{name: "an update accepted, its handler charging and answering", code: updatesCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{UpdateRequest("u1", "Add", json.RawMessage(`5`))}},
			{now: at(2), messages: []Event{activityDone(4, `"receipt-5"`)}},
			{now: at(3), messages: []Event{raised("Done", `null`)}},
		}},
		{name: "a retry policy: one schedule, one failure after 3 attempts", code: retryPolicyCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(4), messages: []Event{{Kind: ActivityFailed, ScheduleID: 2, Failure: &Failure{Message: "busy", Type: "Busy"}, Attempts: 3}}},
		}},
		{name: "moved before it started", code: helloCode, steps: []gstep{
			{now: at(0), host: []Event{moved}, messages: []Event{started(`"world"`)}},
			{now: at(1), messages: []Event{activityDone(3, `"hi"`)}},
		}},

		// Patches and moves.
		{name: "patch: a new instance takes the new path", code: patchedCode, steps: patchedSteps},
		{name: "patch: a history from before the patch replays on the patched code", code: chargeCode, steps: chargeSteps[:2], replay: &patchedCode},
		{name: "patch: asked first in a new step, after a move", code: chargeCode, steps: []gstep{
			chargeSteps[0],
			{now: at(1), host: []Event{moved}, code: &patchedCode, messages: chargeSteps[1].messages},
			{now: at(2), messages: []Event{activityDone(6, `"charged"`)}},
		}},
		{name: "patch: dropped from the code, its history still replays", code: patchedCode, steps: patchedSteps, replay: &patchlessCode},
		{name: "patch: a reset runs its last kept step on the patched code", code: chargeCode, steps: []gstep{
			chargeSteps[0], chargeSteps[1], chargeSteps[2],
			{now: at(3), resetTo: 3, code: &patchedCode},
			{now: at(4), messages: []Event{activityDone(6, `"charged again"`)}},
		}},

		// Every kind of nondeterminism.
		{name: "nondeterminism: a command missing", code: helloCode, steps: helloSteps, replay: ptr(emitting("emits nothing"))},
		{name: "nondeterminism: an activity renamed", code: helloCode, steps: helloSteps, replay: ptr(emitting("says goodbye", activity("SayGoodbye", `"world"`)))},
		{name: "nondeterminism: an activity's input changed", code: helloCode, steps: helloSteps, replay: ptr(emitting("says hello to the moon", activity("SayHello", `"moon"`)))},
		{name: "nondeterminism: a timer instead of an activity", code: helloCode, steps: helloSteps, replay: ptr(emitting("sleeps", timer(30*time.Second)))},
		{name: "nondeterminism: a retry policy changed", code: retryPolicyCode, steps: []gstep{{now: at(0), messages: []Event{started(`null`)}}},
			replay: ptr(program{"charge with five attempts", chargeRetried(&abi.RetryPolicy{MaximumAttempts: 5, InitialIntervalMillis: 1000})})},
		{name: "nondeterminism: two activities reordered", code: emitting("A then B", activity("A", "null"), activity("B", "null")),
			steps: []gstep{{now: at(0), messages: []Event{started(`null`)}}}, replay: ptr(emitting("B then A", activity("B", "null"), activity("A", "null")))},
		{name: "nondeterminism: two waits reordered", code: emitting("Paid then Shipped", wait("Paid"), wait("Shipped")),
			steps: []gstep{{now: at(0), messages: []Event{started(`null`)}}}, replay: ptr(emitting("Shipped then Paid", wait("Shipped"), wait("Paid")))},
		{name: "nondeterminism: a command more before a completion", code: helloCode, steps: helloSteps,
			replay: ptr(emitting("hello and more", activity("SayHello", `"world"`), activity("Extra", "null")))},
		{name: "nondeterminism: a command more at the end of history", code: helloCode, steps: helloSteps[:1],
			replay: ptr(emitting("hello and more", activity("SayHello", `"world"`), activity("Extra", "null")))},
		{name: "nondeterminism: a command more before the end", code: helloCode, steps: helloSteps,
			replay: &program{"hello, then more", func(g *fakeGuest, j abi.Job) []abi.Command {
				if j.Kind == abi.JobStart {
					return hello(g, j)
				}
				return []abi.Command{activity("Extra", "null"), complete(string(j.Result))}
			}}},
		{name: "nondeterminism: a completion without its schedule", code: helloCode, steps: helloSteps,
			edit: func(h []Event) []Event { h[2].ScheduleID = 7; return h }},
		{name: "nondeterminism: a completion of the wrong kind", code: helloCode, steps: helloSteps,
			edit: func(h []Event) []Event {
				h[2] = Event{ID: 3, Kind: TimerFired, Time: h[2].Time, ScheduleID: 2}
				return h
			}},
		{name: "nondeterminism: a raise's target changed", code: raiserCode, steps: []gstep{{now: at(0), messages: []Event{started(`null`)}}},
			replay: ptr(emitting("raises at another", raiseAt("another", "Ping", false), raiseAt("gone", "Ping", true)))},
		{name: "nondeterminism: a raise's name changed", code: raiserCode, steps: []gstep{{now: at(0), messages: []Event{started(`null`)}}},
			replay: ptr(emitting("raises Pong", raiseAt("other", "Pong", false), raiseAt("gone", "Ping", true)))},
		{name: "nondeterminism: a raise made positional", code: raiserCode, steps: []gstep{{now: at(0), messages: []Event{started(`null`)}}},
			replay: ptr(emitting("raises positional events only", raiseAt("other", "Ping", false), raiseAt("gone", "Ping", false)))},
		{name: "nondeterminism: an accepted update refused on replay", code: updatesCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{UpdateRequest("u1", "Add", json.RawMessage(`5`))}},
		}, replay: &refusingCode},
		{name: "nondeterminism: an update's answer changed", code: updatesCode, steps: []gstep{
			{now: at(0), messages: []Event{started(`null`)}},
			{now: at(1), messages: []Event{UpdateRequest("u1", "Add", json.RawMessage(`5`))}},
			{now: at(2), messages: []Event{activityDone(4, `"receipt-5"`)}},
		}, edit: func(h []Event) []Event {
			h[len(h)-1].Result = json.RawMessage(`"receipt-6"`)
			return h
		}},
		{name: "nondeterminism: a history from before the patch on code that dropped it", code: chargeCode, steps: chargeSteps, replay: &patchlessCode},
		{name: "nondeterminism: a patched history on the old code", code: patchedCode, steps: patchedSteps, replay: &chargeCode},
	}
}

func ptr(p program) *program { return &p }

// slug names a scenario's files: its name in lower case, with a dash for
// each run of other characters.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// record drives sc's code through its steps, on a fresh guest every turn,
// as a host without a live cache does, and returns the history and the
// code of its last turn.
func (sc *scenario) record(t *testing.T) ([]Event, program) {
	t.Helper()
	code := sc.code
	var history []Event
	for _, s := range sc.steps {
		if s.code != nil {
			code = *s.code
		}
		for _, ev := range s.host {
			ev.ID, ev.Time = int64(len(history)+1), s.now
			history = append(history, ev)
		}
		messages := s.messages
		if s.resetTo > 0 {
			plan, err := PlanReset(history, s.resetTo)
			if err != nil {
				t.Fatal(err)
			}
			history = plan.Kept
			marker := Event{Kind: ExecutionReset, Module: strings.Repeat("3", 64), SeedExecution: 1, Reason: fmt.Sprintf("reset from execution 1 to event %d", s.resetTo)}
			messages = append(append([]Event{marker}, plan.Raise...), messages...)
		}
		res, err := newExecution(newGuest(code.handle)).Turn(TurnInput{History: history, Messages: messages, Now: s.now})
		if err != nil {
			t.Fatalf("record, turn at %s: %v", s.now, err)
		}
		if res.Err != nil {
			t.Fatalf("record, turn at %s failed the instance: %v", s.now, res.Err)
		}
		history = append(history, res.NewEvents...)
	}
	return history, code
}

// replayed describes the replay of history on code.
func replayed(history []Event, code program) string {
	g := newGuest(code.handle)
	res, err := newExecution(g).Turn(TurnInput{History: history, Now: at(1000)})
	var b strings.Builder
	fmt.Fprintf(&b, "replayed on: %s\n", code.name)
	for i, a := range g.activations {
		fmt.Fprintf(&b, "activation %d at %s", i+1, time.Unix(0, a.Time).UTC().Format(time.RFC3339))
		if a.Replaying {
			b.WriteString(", replaying")
		}
		if len(a.Patches) > 0 {
			fmt.Fprintf(&b, ", patches %s", strings.Join(a.Patches, " "))
		}
		for _, j := range a.Jobs {
			fmt.Fprintf(&b, ": %s\n", describeJob(j))
		}
		for _, c := range g.replies[i] {
			fmt.Fprintf(&b, "  command %d: %s\n", c.Seq, describeCommand(&c))
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "refused: %v\n", err)
		return b.String()
	}
	fmt.Fprintf(&b, "status: %s\n", res.Status)
	if nd, ok := res.Err.(*NondeterminismError); ok {
		fmt.Fprintf(&b, "nondeterminism (%s): %s\n", nd.Code, nd)
	} else if res.Err != nil {
		fmt.Fprintf(&b, "failed: %s\n", res.Err)
	}
	for _, ev := range res.NewEvents {
		fmt.Fprintf(&b, "new event %d: %s\n", ev.ID, ev.String())
	}
	return b.String()
}

// historyJSON writes a history in the form of durabox history --json, an
// event a line: indenting would reformat the JSON values inside events,
// whose bytes replay compares.
func historyJSON(t *testing.T, history []Event) []byte {
	t.Helper()
	b := []byte("{\"events\": [\n")
	for i, ev := range history {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, line...)
		if i < len(history)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return append(b, "]}\n"...)
}

func describeJob(j abi.Job) string {
	failure := func() string {
		var s string
		switch {
		case j.Failure != nil && j.Failure.Type != "":
			s = fmt.Sprintf(", failed %q (type %q)", j.Failure.Message, j.Failure.Type)
		case j.Failure != nil:
			s = fmt.Sprintf(", failed %q", j.Failure.Message)
		default:
			s = ", " + orNull(j.Result)
		}
		if j.Attempts > 0 {
			s += fmt.Sprintf(", after %d attempts", j.Attempts)
		}
		return s
	}
	switch j.Kind {
	case abi.JobStart:
		return fmt.Sprintf("Start(%q, %s)", j.Name, orNull(j.Input))
	case abi.JobResolveActivity:
		return fmt.Sprintf("ResolveActivity(command %d%s)", j.Seq, failure())
	case abi.JobFireTimer:
		return fmt.Sprintf("FireTimer(command %d)", j.Seq)
	case abi.JobResolveEvent:
		return fmt.Sprintf("ResolveEvent(command %d, %s)", j.Seq, orNull(j.Result))
	case abi.JobResolveChild:
		return fmt.Sprintf("ResolveChild(command %d%s)", j.Seq, failure())
	case abi.JobCancel:
		return fmt.Sprintf("Cancel(%q)", j.Name)
	case abi.JobResolveRaise:
		return fmt.Sprintf("ResolveRaise(command %d%s)", j.Seq, failure())
	case abi.JobUpdate:
		return fmt.Sprintf("Update(%q, %q, %s)", j.UpdateID, j.Name, orNull(j.Input))
	}
	return fmt.Sprintf("job kind %d", j.Kind)
}

// historyFile is the form of a stored history: the JSON durabox history
// --json prints.
type historyFile struct {
	Events []Event `json:"events"`
}

func TestGoldenCorpus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "golden")
	if *update {
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, sc := range scenarios() {
		t.Run(slug(sc.name), func(t *testing.T) {
			path := filepath.Join(dir, slug(sc.name))
			recorded, last := sc.record(t)
			if sc.edit != nil {
				recorded = sc.edit(recorded)
			}
			code := last
			if sc.replay != nil {
				code = *sc.replay
			}
			if *update {
				if err := os.WriteFile(path+".json", historyJSON(t, recorded), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path+".golden", []byte(replayed(recorded, code)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			var stored historyFile
			b, err := os.ReadFile(path + ".json")
			if err != nil {
				t.Fatalf("%v (run go test -run TestGoldenCorpus -update in engine/, a module of its own, to record it)", err)
			}
			if err := json.Unmarshal(b, &stored); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(path + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			if got := replayed(stored.Events, code); got != string(want) {
				t.Errorf("the replay of %s.json:\n%s\nwant (%s.golden):\n%s", path, got, path, want)
			}
			// The engine records today what it recorded then.
			again, _ := json.Marshal(historyFile{recorded})
			then, _ := json.Marshal(stored)
			if string(again) != string(then) {
				t.Errorf("recording %q again gives another history:\n%s\nthe corpus has:\n%s", sc.name, again, then)
			}
		})
	}
}

// TestOlderHistoriesReplay: the histories under testdata/older, which
// engines before this one recorded for scenarios of the corpus, and which
// differ from what this engine records only in what new events carry,
// replay exactly as the scenario's history does (its .golden). Each is
// named after its scenario: children-completed-failed-detached-and-
// cancelled.json has its children's ids in the form engines derived until
// they derived PARENT~EXECUTION:EVENT, PARENT:EVENT.
func TestOlderHistoriesReplay(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "older", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no older histories: %v", err)
	}
	bySlug := map[string]scenario{}
	for _, sc := range scenarios() {
		bySlug[slug(sc.name)] = sc
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			sc, ok := bySlug[name]
			if !ok {
				t.Fatalf("%s is named after no scenario of the corpus", f)
			}
			var older historyFile
			b, err := os.ReadFile(f)
			if err == nil {
				err = json.Unmarshal(b, &older)
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "golden", name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			_, code := sc.record(t)
			if sc.replay != nil {
				code = *sc.replay
			}
			if got := replayed(older.Events, code); got != string(want) {
				t.Errorf("the replay of %s:\n%s\nwant (as the corpus's %s.golden):\n%s", f, got, name, want)
			}
		})
	}
}

// TestGoldenCorpusCoversEverything: every kind of event appears in a
// stored history, and every kind of nondeterminism in a replay.
func TestGoldenCorpusCoversEverything(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden histories: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		var h historyFile
		b, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(b, &h)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range h.Events {
			seen[string(ev.Kind)] = true
		}
		golden, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".golden")
		if err != nil {
			t.Fatal(err)
		}
		if _, rest, ok := strings.Cut(string(golden), "nondeterminism ("); ok {
			code, _, _ := strings.Cut(rest, ")")
			seen[code] = true
		}
	}
	for _, c := range constants(t, "event.go", "EventKind") {
		if !seen[c] {
			t.Errorf("no history in the corpus has a %s event", c)
		}
	}
	for _, c := range constants(t, "errors.go", "NondeterminismCode") {
		if !seen[c] {
			t.Errorf("no replay in the corpus diverges with %s", c)
		}
	}
}

// constants returns the values of the string constants of type typ that
// file declares.
func constants(t *testing.T, file, typ string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
				continue
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					out = append(out, strings.Trim(lit.Value, `"`))
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s declares no constant of type %s", file, typ)
	}
	return slices.Sorted(slices.Values(out))
}
