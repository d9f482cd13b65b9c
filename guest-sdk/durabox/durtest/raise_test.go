package durtest_test

import (
	"testing"

	"github.com/durabox/durabox/engine"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func init() {
	// Notify raises Ping at each instance it is given, one after the
	// other, and returns what became of each raise.
	durabox.RegisterOrchestration("Notify", func(ctx *durabox.Context, targets []string) ([]string, error) {
		out := make([]string, len(targets))
		for i, id := range targets {
			out[i] = "delivered"
			if err := ctx.Raise(id, "Ping", "hi "+id, false).Get(nil); err != nil {
				out[i] = err.Error()
			}
		}
		return out, nil
	})
	// Tell raises the persistent event Note at the instance it is given
	// and returns what became of it.
	durabox.RegisterOrchestration("Tell", func(ctx *durabox.Context, target string) (string, error) {
		if err := ctx.Raise(target, "Note", nil, true).Get(nil); err != nil {
			return err.Error(), nil
		}
		return "delivered", nil
	})
	// Listen waits for Ping and returns its data.
	durabox.RegisterOrchestration("Listen", func(ctx *durabox.Context, _ any) (string, error) {
		var data string
		err := ctx.WaitEvent("Ping").Get(&data)
		return data, err
	})
}

// TestRaiseBetweenInstances: an orchestration's raise reaches a waiting
// instance once, and the raiser learns, in its history, of a target that
// does not exist and one that has finished, and goes on; each raise's
// outcome comes in the turn after it.
func TestRaiseBetweenInstances(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	listener := env.Start("Listen", nil, "listener")
	done := env.Start("Greet", "ada", "done")
	done.AdvanceToEnd()
	sender := env.Start("Notify", []string{"listener", "nobody", "done"}, "sender")
	expectResult(t, listener, `"hi listener"`)
	expectResult(t, sender, `["delivered","event \"Ping\" was not delivered to instance \"nobody\": no such instance exists",`+
		`"event \"Ping\" was not delivered to instance \"done\": instance finished: it is Completed"]`)
	expectHistory(t, sender, `OrchestrationStarted("Notify", ["listener","nobody","done"])`,
		`ExternalEventSent("listener", "Ping", "hi listener")`, `ExternalEventDelivered(event 2)`,
		`ExternalEventSent("nobody", "Ping", "hi nobody")`,
		`ExternalEventNotDelivered(event 4, "event \"Ping\" was not delivered to instance \"nobody\": no such instance exists")`,
		`ExternalEventSent("done", "Ping", "hi done")`,
		`ExternalEventNotDelivered(event 6, "event \"Ping\" was not delivered to instance \"done\": instance finished: it is Completed")`,
		`OrchestrationCompleted(["delivered","event \"Ping\" was not delivered to instance \"nobody\": no such instance exists","event \"Ping\" was not delivered to instance \"done\": instance finished: it is Completed"])`)
}

// TestRaiseAtAFullMailbox: a persistent event raised at an instance whose
// execution has taken as many as it takes is not delivered, in the words a
// host's store uses.
func TestRaiseAtAFullMailbox(t *testing.T) {
	t.Parallel()
	env := durtest.New(t, durtest.Options{})
	listener := env.Start("Listen", nil, "listener")
	for range engine.MaxPersistentEvents {
		listener.RaisePersistent("Note", nil)
	}
	teller := env.Start("Tell", "listener", "teller")
	expectResult(t, teller, `"event \"Note\" was not delivered to instance \"listener\": too many persistent events: its execution has taken 20 and has 0 waiting, at most 20 between them"`)
}
