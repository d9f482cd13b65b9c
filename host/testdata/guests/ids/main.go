// Command ids holds orchestrations for the tests of the instance ids the
// host derives for children: children started in every execution of an
// instance that continues as new, and in the step a reset runs again.
package main

import (
	"fmt"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Leaf", func(ctx *durabox.Context, n int) (int, error) { return n, nil })
	durabox.RegisterOrchestration("Rounds", Rounds)
	durabox.RegisterOrchestration("ChildThenWait", ChildThenWait)
	durabox.RegisterOrchestration("NamedChildThenWait", NamedChildThenWait)
}

// Rounds starts a detached Leaf and a child Leaf in each of n executions,
// waits for the child, and continues as new until n is 1; it returns what
// the last child returned.
func Rounds(ctx *durabox.Context, n int) (int, error) {
	if err := ctx.StartDetached("Leaf", -n); err != nil {
		return 0, err
	}
	got, err := durabox.Child[int](ctx, "Leaf", n)
	if err != nil {
		return 0, err
	}
	if n > 1 {
		return 0, ctx.ContinueAsNew(n - 1)
	}
	return got, nil
}

// ChildThenWait starts a child Leaf at its first step, waits for it, then
// waits for the event "go": resetting it to its first event starts the
// child again.
func ChildThenWait(ctx *durabox.Context, n int) (string, error) {
	got, err := durabox.Child[int](ctx, "Leaf", n)
	if err != nil {
		return "", err
	}
	word, err := durabox.Await[string](ctx.WaitEvent("go"))
	return fmt.Sprintf("child said %d, then %s", got, word), err
}

// NamedChildThenWait is ChildThenWait with a child whose id it chooses:
// "named-" and its own id.
func NamedChildThenWait(ctx *durabox.Context, n int) (string, error) {
	var got int
	if err := ctx.CallChild("Leaf", n, "named-"+ctx.InstanceID()).Get(&got); err != nil {
		return "", err
	}
	word, err := durabox.Await[string](ctx.WaitEvent("go"))
	return fmt.Sprintf("child said %d, then %s", got, word), err
}

func main() {}
