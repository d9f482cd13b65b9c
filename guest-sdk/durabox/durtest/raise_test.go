package durtest_test

import (
	"testing"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durtest"
)

func init() {
	// Notify raises Ping at each instance it is given and returns what
	// became of each raise.
	durabox.RegisterOrchestration("Notify", func(ctx *durabox.Context, targets []string) ([]string, error) {
		var futures []*durabox.Future
		for _, id := range targets {
			futures = append(futures, ctx.Raise(id, "Ping", "hi "+id, false))
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
// does not exist and one that has finished, and goes on.
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
		`ExternalEventSent("listener", "Ping", "hi listener")`, `ExternalEventSent("nobody", "Ping", "hi nobody")`, `ExternalEventSent("done", "Ping", "hi done")`,
		`ExternalEventDelivered(event 2)`,
		`ExternalEventNotDelivered(event 3, "event \"Ping\" was not delivered to instance \"nobody\": no such instance exists")`,
		`ExternalEventNotDelivered(event 4, "event \"Ping\" was not delivered to instance \"done\": instance finished: it is Completed")`,
		`OrchestrationCompleted(["delivered","event \"Ping\" was not delivered to instance \"nobody\": no such instance exists","event \"Ping\" was not delivered to instance \"done\": instance finished: it is Completed"])`)
}
