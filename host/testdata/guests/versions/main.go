// Command versions is a test guest built in several versions (-ldflags
// "-X main.version=v2"), for upgrades, replays, exports and resets.
//
// Flow waits for the event "go", calls the activity Step, waits for "go"
// again, and completes with what ran each part. The versions differ after
// the first wait: v1 calls Step("a"), v2 calls Step("b"), and v3 asks
// whether it is patched ("step-b") and calls Step("b") if so, Step("a")
// otherwise. An input of "crash" makes every version but v1 crash (exit)
// after the first wait. Other is an orchestration no version of Flow's module shares
// with it: the module built with -X main.other=yes registers only Other.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

var (
	version = "v1"
	other   = "no"
	nostep  = "no"
)

func init() {
	if other == "yes" {
		durabox.RegisterOrchestration("Other", func(ctx *durabox.Context, _ any) (string, error) { return "other", nil })
		return
	}
	durabox.RegisterOrchestration("Flow", Flow)
	if nostep != "yes" {
		durabox.RegisterActivity("Step", Step)
	}
}

func Flow(ctx *durabox.Context, input string) (string, error) {
	if err := ctx.WaitEvent("go").Get(nil); err != nil {
		return "", err
	}
	ctx.Logger().Info("the first go came", "version", version)
	if input == "crash" && version != "v1" {
		os.Exit(3)
	}
	arg := "a"
	switch version {
	case "v2":
		arg = "b"
	case "v3":
		if ctx.Patched("step-b") {
			arg = "b"
		}
	}
	step, err := durabox.Call[string](ctx, "Step", arg)
	if err != nil {
		return "", err
	}
	ctx.SetCustomStatus("waiting for the second go")
	if err := ctx.WaitEvent("go").Get(nil); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s, finished by %s", step, version), nil
}

func Step(_ context.Context, arg string) (string, error) {
	return fmt.Sprintf("step %s by %s", arg, version), nil
}

func main() {}
