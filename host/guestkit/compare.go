package guestkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
)

// canonical returns the JSON value b holds in one spelling (no spaces,
// object keys sorted), so that two SDKs that spell one value differently
// compare equal; empty is null. What is not JSON is returned quoted as
// it is, marked, so that it never equals a value.
func canonical(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "null"
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		return fmt.Sprintf("(not JSON: %q)", b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(not JSON: %q)", b)
	}
	return string(out)
}

// shape describes a history event as the kit compares it: as
// engine.Event.String does, with its JSON canonical, a timer's due time
// as the delay from the step that made it, and a failure's text left out
// (an SDK may word it; the cases check what it must contain).
func shape(e engine.Event) string {
	e.Input, e.Result = []byte(canonical(e.Input)), []byte(canonical(e.Result))
	if e.Failure != nil {
		e.Failure = &engine.Failure{Message: "…"}
	}
	if e.Kind == engine.TimerCreated && e.FireAt != nil {
		return fmt.Sprintf("%s(+%s)", e.Kind, e.FireAt.Sub(e.Time))
	}
	return e.String()
}

// shapes describes events as shape does.
func shapes(events []engine.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = shape(e)
	}
	return out
}

// cmd is a command as the kit expects it: a failure's message need only
// contain failure.
type cmd struct {
	abi.Command
	failure string
}

// The commands of the raw cases, by kind.
func schedule(seq uint64, name, input string) cmd {
	return cmd{Command: abi.Command{Kind: abi.CommandScheduleActivity, Seq: seq, Name: name, Input: []byte(input)}}
}

func startTimer(seq uint64, d time.Duration) cmd {
	return cmd{Command: abi.Command{Kind: abi.CommandStartTimer, Seq: seq, Delay: int64(d)}}
}

func complete(seq uint64, output string) cmd {
	return cmd{Command: abi.Command{Kind: abi.CommandComplete, Seq: seq, Output: []byte(output)}}
}

func fail(seq uint64, contains string) cmd {
	return cmd{Command: abi.Command{Kind: abi.CommandFail, Seq: seq}, failure: contains}
}

func cancel(kind abi.CommandKind, seq, target uint64) cmd {
	return cmd{Command: abi.Command{Kind: kind, Seq: seq, Target: target}}
}

func wait(kind abi.CommandKind, seq uint64, name string) cmd {
	return cmd{Command: abi.Command{Kind: kind, Seq: seq, Name: name}}
}

func startChild(seq uint64, name, input string) cmd {
	return cmd{Command: abi.Command{Kind: abi.CommandStartChild, Seq: seq, Name: name, Input: []byte(input)}}
}

func named(kind abi.CommandKind, seq uint64, name string) cmd {
	return cmd{Command: abi.Command{Kind: kind, Seq: seq, Name: name}}
}

// kindNames names the commands as ABI.md does.
var kindNames = map[abi.CommandKind]string{
	abi.CommandScheduleActivity: "ScheduleActivity", abi.CommandStartTimer: "StartTimer",
	abi.CommandComplete: "Complete", abi.CommandFail: "Fail", abi.CommandCancelTimer: "CancelTimer",
	abi.CommandCancelActivity: "CancelActivity", abi.CommandWaitEvent: "WaitEvent",
	abi.CommandWaitEventPersistent: "WaitEventPersistent", abi.CommandCancelWait: "CancelWait",
	abi.CommandContinueAsNew: "ContinueAsNew", abi.CommandStartChild: "StartChild",
	abi.CommandCancelChild: "CancelChild", abi.CommandSetCustomStatus: "SetCustomStatus",
	abi.CommandPatch: "Patch", abi.CommandRaise: "Raise",
}

// kindName names kind as ABI.md does, or by its number.
func kindName(kind abi.CommandKind) string {
	if n, ok := kindNames[kind]; ok {
		return n
	}
	return fmt.Sprintf("command kind %d", kind)
}

// describe writes a command as docs/conformance.md does, with every field
// the ABI gives its kind: Kind(seq, …).
func describe(c abi.Command) string {
	args := []string{fmt.Sprint(c.Seq)}
	switch c.Kind {
	case abi.CommandScheduleActivity:
		args = append(args, c.Name, canonical(c.Input))
		if c.TimeoutMillis > 0 {
			args = append(args, fmt.Sprintf("timeout %dms", c.TimeoutMillis))
		}
	case abi.CommandStartTimer:
		args = append(args, time.Duration(c.Delay).String())
	case abi.CommandComplete, abi.CommandContinueAsNew:
		args = append(args, canonical(c.Output))
	case abi.CommandFail:
		msg := "no failure"
		if c.Failure != nil {
			msg = fmt.Sprintf("%q", c.Failure.Message)
		}
		args = append(args, msg)
	case abi.CommandCancelTimer, abi.CommandCancelActivity, abi.CommandCancelWait, abi.CommandCancelChild:
		args = append(args, fmt.Sprintf("target %d", c.Target))
	case abi.CommandWaitEvent, abi.CommandWaitEventPersistent, abi.CommandSetCustomStatus, abi.CommandPatch:
		args = append(args, c.Name)
	case abi.CommandStartChild:
		args = append(args, c.Name, canonical(c.Input))
		if c.Detached {
			args = append(args, "detached")
		}
		if c.InstanceID != "" {
			args = append(args, "id "+c.InstanceID)
		}
	case abi.CommandRaise:
		args = append(args, c.Name, c.InstanceID, canonical(c.Input))
		if c.Persistent {
			args = append(args, "persistent")
		}
	}
	return kindName(c.Kind) + "(" + strings.Join(args, ", ") + ")"
}

// describeAll describes each command, one a line.
func describeAll(cmds []abi.Command) string {
	if len(cmds) == 0 {
		return "  (no command)"
	}
	var b strings.Builder
	for i, c := range cmds {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  " + describe(c))
	}
	return b.String()
}

// matches reports whether got is the command want expects.
func (want cmd) matches(got abi.Command) bool {
	w := want.Command
	if want.Kind == abi.CommandFail {
		return got.Kind == w.Kind && got.Seq == w.Seq && got.Failure != nil && strings.Contains(got.Failure.Message, want.failure)
	}
	return describe(got) == describe(w)
}

// String describes the command expected, as describe does.
func (want cmd) String() string {
	if want.Kind == abi.CommandFail {
		return fmt.Sprintf("Fail(%d, a message that contains %q)", want.Seq, want.failure)
	}
	return describe(want.Command)
}
