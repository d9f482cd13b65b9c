// Command heartbeats has activities that run in the module and send
// heartbeats. Count counts frames, a heartbeat each; on its first attempt
// it stops sending them at a frame, and hangs, so that the host stops the
// attempt at its heartbeat timeout and the next one resumes from the last
// frame reported. Linger sends heartbeats until its result is no longer
// wanted, then reports its cleanup to a URL, over HTTP (and, after its
// first heartbeat, that it started). Approve is completed from outside:
// it posts its completion token to a URL and leaves its outcome to it.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
	"github.com/durabox/durabox/guest-sdk/durabox/durahttp"
)

// Count is the input of the activity Count.
type Count struct {
	Frames int `json:"frames"`
	// HangAt is the frame at which the first attempt hangs (0: never).
	HangAt int `json:"hangAt"`
}

func init() {
	durabox.RegisterActivity("Count", func(ctx context.Context, c Count) (string, error) {
		var last struct {
			Frame int `json:"frame"`
		}
		resumed, err := durabox.LastHeartbeat(ctx, &last)
		if err != nil {
			return "", err
		}
		info, _ := durabox.ActivityInfoFrom(ctx)
		for frame := last.Frame + 1; frame <= c.Frames; frame++ {
			if frame == c.HangAt && info.Attempt == 1 {
				for {
					time.Sleep(time.Hour) // hung: no more heartbeats
				}
			}
			if err := durabox.Heartbeat(ctx, map[string]int{"frame": frame}); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%d frames, attempt %d, resumed %v after frame %d", c.Frames, info.Attempt, resumed, last.Frame), nil
	})
	durabox.RegisterActivity("Linger", func(ctx context.Context, reportURL string) (string, error) {
		if err := durabox.Heartbeat(ctx, nil); err != nil {
			return "", err
		}
		if err := post(reportURL + "?started"); err != nil {
			return "", err
		}
		for {
			err := durabox.Heartbeat(ctx, nil)
			if errors.Is(err, durabox.ErrActivityCanceled) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if ctx.Err() == nil {
			return "", errors.New("cancelled, but the context is not done")
		}
		return "cleaned up", post(reportURL + "?cleaned")
	})
	// Approve leaves its outcome to whoever holds its completion token,
	// which it posts to a URL.
	durabox.RegisterActivity("Approve", func(ctx context.Context, tokenURL string) (string, error) {
		token, err := durabox.CompleteLater(ctx)
		if err != nil {
			return "", err
		}
		if err := post(tokenURL + "?" + token); err != nil {
			return "", err
		}
		return "", durabox.ErrResultPending
	})
	// Approval waits for Approve, whose attempt has an hour.
	durabox.RegisterOrchestration("Approval", func(ctx *durabox.Context, tokenURL string) (string, error) {
		return durabox.Call[string](ctx, "Approve", tokenURL, durabox.WithTimeout(time.Hour))
	})
	durabox.RegisterOrchestration("Count", func(ctx *durabox.Context, c Count) (string, error) {
		return durabox.Call[string](ctx, "Count", c, durabox.WithHeartbeatTimeout(time.Second))
	})
	// Abandon calls Linger against the event "stop": when the event wins,
	// Linger's result is no longer wanted.
	durabox.RegisterOrchestration("Abandon", func(ctx *durabox.Context, cleanupURL string) (string, error) {
		linger := ctx.CallActivity("Linger", cleanupURL)
		stop := ctx.WaitEvent("stop")
		if ctx.Select(linger, stop) == 1 {
			return "stopped", nil
		}
		var out string
		return out, linger.Get(&out)
	})
}

func post(url string) error {
	resp, err := durahttp.Client().Post(url, "text/plain", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func main() {}
