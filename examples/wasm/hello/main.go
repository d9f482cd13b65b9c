// Command hello is the smallest Durabox module: the orchestration Greeting
// calls the activity SayHello with its input and returns the greeting.
package main

import (
	"context"
	"fmt"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

func init() {
	durabox.RegisterOrchestration("Greeting", Greeting)
	durabox.RegisterActivity("SayHello", SayHello)
}

// Greeting greets name through the SayHello activity.
func Greeting(ctx *durabox.Context, name string) (string, error) {
	return durabox.Call[string](ctx, "SayHello", name)
}

// SayHello returns a greeting for name.
func SayHello(_ context.Context, name string) (string, error) {
	return fmt.Sprintf("Hello, %s!", name), nil
}

func main() {}
