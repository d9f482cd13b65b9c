// Command approval is an approval workflow: a request waits for an Approval
// event, raised from outside, or times out.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Approval", Approval)
	durabox.RegisterActivity("Notify", Notify)
}

// Request is what needs approving.
type Request struct {
	Item string `json:"item"`
	// Timeout is how long to wait for a decision, as a Go duration.
	Timeout string `json:"timeout"`
}

// Decision is the data of the Approval event.
type Decision struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`
}

// Approval asks for a decision and acts on it, or gives up at the timeout.
// The query Decision answers with the decision once there is one, null
// before.
func Approval(ctx *durabox.Context, req Request) (string, error) {
	var decided *Decision
	durabox.HandleQuery(ctx, "Decision", func(struct{}) (*Decision, error) { return decided, nil })
	timeout, err := time.ParseDuration(req.Timeout)
	if err != nil {
		return "", fmt.Errorf("timeout %q is not a duration such as 24h", req.Timeout)
	}
	if _, err := durabox.Call[string](ctx, "Notify", "please approve "+req.Item); err != nil {
		return "", err
	}
	ctx.SetCustomStatus("waiting for a decision on " + req.Item)
	decision := ctx.WaitEvent("Approval")
	if ctx.Select(decision, ctx.NewTimer(timeout)) == 1 {
		return durabox.Call[string](ctx, "Notify", req.Item+": no decision in "+req.Timeout+", request expired")
	}
	d, err := durabox.Await[Decision](decision)
	if err != nil {
		return "", err
	}
	decided = &d
	verdict := "rejected"
	if d.Approved {
		verdict = "approved"
	}
	return durabox.Call[string](ctx, "Notify", fmt.Sprintf("%s %s by %s", req.Item, verdict, d.By))
}

// Notify tells people; here it returns what it would say.
func Notify(_ context.Context, message string) (string, error) { return message, nil }

func main() {}
