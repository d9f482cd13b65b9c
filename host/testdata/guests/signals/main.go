// Command signals holds orchestrations for the tests of events raised
// between instances (ctx.Raise) and of signal with start.
package main

import (
	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Notify", Notify)
	durabox.RegisterOrchestration("Listen", Listen)
	durabox.RegisterOrchestration("Rally", Rally)
}

// Notify raises the persistent event Ping at each instance it is given, with "hi" and the
// instance's id as data, and returns what became of each raise: "delivered"
// or the error that says why not.
func Notify(ctx *durabox.Context, targets []string) ([]string, error) {
	var futures []*durabox.Future
	for _, id := range targets {
		futures = append(futures, ctx.Raise(id, "Ping", "hi "+id, true))
	}
	var out []string
	for _, f := range futures {
		if err := f.Get(nil); err != nil {
			out = append(out, err.Error())
		} else {
			out = append(out, "delivered")
		}
	}
	return out, nil
}

// Listen waits for the persistent event Ping and returns its data.
func Listen(ctx *durabox.Context, _ any) (string, error) {
	return durabox.Await[string](ctx.WaitEventPersistent("Ping"))
}

// RallyInput is Rally's input: the peer it plays with, whether it serves
// first, and how many balls it sends.
type RallyInput struct {
	Peer   string
	Serves bool
	Balls  int
}

// Rally plays with its peer: each sends Balls persistent Ball events to the
// other, in turn (the server first), and returns how many it received.
func Rally(ctx *durabox.Context, in RallyInput) (int, error) {
	received := 0
	for i := range in.Balls {
		if in.Serves || i > 0 {
			if err := ctx.Raise(in.Peer, "Ball", i, true).Get(nil); err != nil {
				return received, err
			}
		}
		if err := ctx.WaitEventPersistent("Ball").Get(nil); err != nil {
			return received, err
		}
		received++
	}
	if !in.Serves {
		// The receiver's last ball goes back last.
		return received, ctx.Raise(in.Peer, "Ball", in.Balls, true).Get(nil)
	}
	return received, nil
}

func main() {}
