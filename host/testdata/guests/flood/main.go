// Command flood is a guest that floods its output, for the containment
// tests: its orchestrations and activities write a gibibyte to stdout or
// stderr with no newline, or a million short lines. The host must keep
// what it holds of that output bounded and say in the instance's log what
// it cut or dropped.
package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/durabox/durabox/guest-sdk/durabox"
)

// gib is how much a flood without newlines writes.
const gib = 1 << 30

func init() {
	durabox.RegisterOrchestration("Flood", func(ctx *durabox.Context, stream string) (string, error) {
		return flood(stream)
	})
	durabox.RegisterOrchestration("FloodInActivity", func(ctx *durabox.Context, stream string) (string, error) {
		return durabox.Call[string](ctx, "Flood", stream)
	})
	durabox.RegisterActivity("Flood", func(_ context.Context, stream string) (string, error) {
		return flood(stream)
	})
	durabox.RegisterOrchestration("Lines", func(ctx *durabox.Context, n int) (int, error) {
		for range n {
			os.Stdout.WriteString("a short line\n")
		}
		return n, nil
	})
}

// flood writes a gibibyte of 'x' to stream ("stdout" or "stderr") in
// writes of a mebibyte, with no newline.
func flood(stream string) (string, error) {
	var w io.Writer = os.Stdout
	if stream == "stderr" {
		w = os.Stderr
	}
	chunk := []byte(strings.Repeat("x", 1<<20))
	for n := 0; n < gib; n += len(chunk) {
		w.Write(chunk)
	}
	return "flooded " + stream, nil
}

func main() {}
