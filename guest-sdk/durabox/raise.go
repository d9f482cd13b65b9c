package durabox

import (
	"fmt"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/guest-sdk/durabox/internal/plainjson"
)

// Raise raises the event name with data (encoded to JSON) at the instance
// instanceID, as `durabox raise` does (a persistent event when persistent
// is true), and returns a future for its outcome. The raise is a command
// like any other: history records it, and the host delivers the event with
// the commit of the step that raised it, exactly once, to an instance on
// this host or another one on the same store (this instance too).
//
// The future resolves with nil once the event is among the instance's
// messages, which it then applies under its own rules (a positional event
// no wait takes is dropped there, as one raised from outside is). It
// fails with a *RaiseError when the event was not delivered: no such
// instance exists, the instance has finished, or a persistent event would
// be one more than its execution takes. Either way history records the
// outcome, and this orchestration goes on.
//
// A raise cannot be taken back: cancelling the instance, or the scope it
// was raised in, leaves its future to resolve with the outcome. Through a
// cancelled Context (WithCancel) it raises nothing and returns a future
// failed with ErrCanceled.
func (c *Context) Raise(instanceID, name string, data any, persistent bool) *Future {
	c.rt.own("ctx.Raise")
	raw, err := plainjson.Marshal(data)
	if err != nil {
		return c.rt.settled(fmt.Errorf("durabox: the data of event %q does not encode to JSON: %w", name, err))
	}
	if err := abi.CheckName("event name", name); err != nil {
		return c.rt.settled(fmt.Errorf("durabox: event %q cannot be raised: %w", name, err))
	}
	if err := abi.CheckName("instance id", instanceID); err != nil {
		return c.rt.settled(fmt.Errorf("durabox: event %q cannot be raised: %w", name, err))
	}
	return c.op(abi.Command{Kind: abi.CommandRaise, Name: name, InstanceID: instanceID, Input: raw, Persistent: persistent})
}

// RaiseError is the error a Raise's future fails with when the event was
// not delivered.
type RaiseError struct {
	// Event is the event's name.
	Event string
	// Message says to which instance, and why not.
	Message string
}

func (e *RaiseError) Error() string { return e.Message }
