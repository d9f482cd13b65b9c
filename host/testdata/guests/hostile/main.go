// Command hostile is a guest whose orchestrations misbehave in every way a
// guest can, for the containment tests: each must fail only its own
// instance, with an error that names the cause.
package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// sink keeps allocations reachable so the collector cannot free them.
var sink [][]byte

func recurse(n int) int { return recurse(n+1) + 1 }

func init() {
	durabox.RegisterOrchestration("Loop", func(ctx *durabox.Context, _ any) (int, error) {
		n := 0
		for {
			n++
		}
	})
	durabox.RegisterOrchestration("Allocate", func(ctx *durabox.Context, _ any) (int, error) {
		for {
			sink = append(sink, make([]byte, 8<<20))
		}
	})
	durabox.RegisterOrchestration("Recurse", func(ctx *durabox.Context, _ any) (int, error) {
		return recurse(0), nil
	})
	durabox.RegisterOrchestration("NilDereference", func(ctx *durabox.Context, _ any) (int, error) {
		var p *struct{ n int }
		return p.n, nil
	})
	durabox.RegisterOrchestration("Exit", func(ctx *durabox.Context, _ any) (int, error) {
		os.Exit(3)
		return 0, nil
	})
	durabox.RegisterOrchestration("ReadFile", func(ctx *durabox.Context, _ any) (string, error) {
		b, err := os.ReadFile("/etc/hostname")
		return string(b), err
	})
	durabox.RegisterOrchestration("Dial", func(ctx *durabox.Context, _ any) (string, error) {
		c, err := net.Dial("tcp", "127.0.0.1:80")
		if err != nil {
			return "", err
		}
		return c.RemoteAddr().String(), nil
	})
	durabox.RegisterOrchestration("Getenv", func(ctx *durabox.Context, _ any) (string, error) {
		if v := os.Getenv("HOME"); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("HOME is not set: %d environment variables", len(os.Environ()))
	})
	durabox.RegisterOrchestration("Healthy", func(ctx *durabox.Context, s string) (string, error) {
		return durabox.Call[string](ctx, "Echo", s)
	})
	durabox.RegisterActivity("Echo", func(_ context.Context, s string) (string, error) { return s, nil })
}

func main() {}
