// Command eternal is an orchestration that runs forever without its history
// growing: each round it does its work, sleeps, and continues as new.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Heartbeat", Heartbeat)
	durabox.RegisterActivity("Beat", Beat)
}

// State is carried from one execution to the next.
type State struct {
	Round int `json:"round"`
	// Rounds stops the heartbeat after that many rounds (0: never).
	Rounds int `json:"rounds"`
	// Every is the pause between rounds, as a Go duration.
	Every string `json:"every"`
}

// Heartbeat beats once, then continues as new with the next round.
func Heartbeat(ctx *durabox.Context, s State) (string, error) {
	if _, err := durabox.Call[string](ctx, "Beat", s.Round); err != nil {
		return "", err
	}
	if s.Rounds > 0 && s.Round+1 >= s.Rounds {
		return fmt.Sprintf("stopped after %d rounds", s.Rounds), nil
	}
	every, err := time.ParseDuration(s.Every)
	if err != nil {
		return "", fmt.Errorf("every %q is not a duration such as 1m", s.Every)
	}
	if err := ctx.Sleep(every); err != nil {
		return "", err
	}
	s.Round++
	return "", ctx.ContinueAsNew(s)
}

// Beat does one round's work.
func Beat(_ context.Context, round int) (string, error) {
	return fmt.Sprintf("beat %d", round), nil
}

func main() {}
