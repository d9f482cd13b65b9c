// Command levels logs at every level, from an orchestration and from an
// activity, through the SDK's loggers and as raw lines: the host logs each
// line at its level, so its --log-level filters them.
package main

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	// Shout logs once at each level, prints a line with a priority of its
	// own and a plain one.
	durabox.RegisterActivity("Shout", func(ctx context.Context, step int) (string, error) {
		log := durabox.ActivityLogger()
		log.Debug("activity debug", "step", step)
		log.Info("activity info", "step", step)
		log.Warn("activity warning", "step", step)
		log.Error("activity error", "step", step)
		fmt.Println("<2>activity raw critical")
		fmt.Println("activity plain")
		return "ok", nil
	})
	// Levels logs once at each level in each of its steps: the start and
	// the end of each of two calls of Shout.
	durabox.RegisterOrchestration("Levels", func(ctx *durabox.Context, _ any) (string, error) {
		log := ctx.Logger()
		for step := range 3 {
			log.Debug("orchestration debug", "step", step)
			log.Info("orchestration info", "step", step)
			log.Warn("orchestration warning", "step", step)
			log.Error("orchestration error", "step", step)
			if step < 2 {
				if _, err := durabox.Call[string](ctx, "Shout", step); err != nil {
					return "", err
				}
			}
		}
		return "done", nil
	})
}

func main() {}
