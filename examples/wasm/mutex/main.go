// Command mutex is a lock that orchestration instances take in turn. The
// orchestration Lock holds it and grants it to one asker at a time, in the
// order they asked; each Worker asks for it, does its work while it holds
// it, and gives it back. They talk by persistent events, which the activity
// Signal raises through the host's HTTP API.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durahttp"
)

func init() {
	durabox.RegisterOrchestration("Lock", Lock)
	durabox.RegisterOrchestration("Worker", Worker)
	durabox.RegisterActivity("Signal", Signal)
	durabox.RegisterActivity("Work", Work)
}

// PerExecution is how many askers one execution of Lock serves before it
// continues as new: each takes two persistent events (its acquire and its
// release), and an execution takes at most 20.
const PerExecution = 8

// Lock grants the lock to the instances that ask for it with the
// persistent event "acquire" (its data the asker's id), one at a time, in
// the order they asked: it raises "granted" on the holder and waits for
// its "release:ID" before the next. Each asker is served by a branch that
// takes a durabox.Mutex, which grants in the order the branches asked.
// served counts the askers served by earlier executions.
func Lock(ctx *durabox.Context, served int) (int, error) {
	var m durabox.Mutex
	serving := 0
	for range PerExecution {
		asker, err := durabox.Await[string](ctx.WaitEventPersistent("acquire"))
		if err != nil {
			return served, err
		}
		serving++
		ctx.Go(func(ctx *durabox.Context) {
			defer func() { serving-- }()
			if m.Lock(ctx) != nil {
				return
			}
			defer m.Unlock()
			ctx.SetCustomStatus("held by " + asker)
			if _, err := durabox.Call[string](ctx, "Signal", Message{To: asker, Event: "granted"}); err != nil {
				return
			}
			if ctx.WaitEventPersistent("release:"+asker).Get(nil) == nil {
				served++
			}
		})
	}
	// Askers who ask meanwhile wait in the mailbox, which continue-as-new
	// carries over.
	if err := ctx.Await(func() bool { return serving == 0 }); err != nil {
		return served, err
	}
	ctx.SetCustomStatus(fmt.Sprintf("free, %d served", served))
	return served, ctx.ContinueAsNew(served)
}

// Job is a Worker's input: the id of the Lock instance, and the work to do
// while holding it.
type Job struct {
	Lock string `json:"lock"`
	Work string `json:"work"`
}

// Worker takes the lock, does its work while it holds it, and gives it
// back.
func Worker(ctx *durabox.Context, job Job) (string, error) {
	me := ctx.InstanceID()
	if _, err := durabox.Call[string](ctx, "Signal", Message{To: job.Lock, Event: "acquire", Data: me}); err != nil {
		return "", err
	}
	if err := ctx.WaitEventPersistent("granted").Get(nil); err != nil {
		return "", err
	}
	out, err := durabox.Call[string](ctx, "Work", job.Work)
	if _, release := durabox.Call[string](ctx, "Signal", Message{To: job.Lock, Event: "release:" + me}); release != nil {
		return "", release
	}
	return out, err
}

// Work is what a Worker does while it holds the lock; here it says what it
// did.
func Work(_ context.Context, work string) (string, error) { return "did " + work, nil }

// Message is an event for another instance.
type Message struct {
	To    string `json:"to"`
	Event string `json:"event"`
	Data  string `json:"data,omitempty"`
}

// Signal raises a persistent event on another instance, by the host's API
// at $DURABOX_URL (which serve --allow-http must allow), with the admin
// token $DURABOX_TOKEN if the host has one.
func Signal(_ context.Context, msg Message) (string, error) {
	base := strings.TrimSuffix(os.Getenv("DURABOX_URL"), "/")
	if base == "" {
		return "", errors.New("signal: DURABOX_URL is not set: deploy with --env DURABOX_URL=http://HOST:PORT (the host's address, on its --allow-http list)")
	}
	body, err := json.Marshal(map[string]any{"name": msg.Event, "data": msg.Data, "persistent": true})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequest(http.MethodPost, base+"/v1/instances/"+url.PathEscape(msg.To)+"/events", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if token := os.Getenv("DURABOX_TOKEN"); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := durahttp.Client().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("signal: raising %s on %s: %s %s", msg.Event, msg.To, resp.Status, answer)
	}
	return msg.Event + " to " + msg.To, nil
}

func main() {}
