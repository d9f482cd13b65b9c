// Command bulk is a guest whose orchestrations do a great deal of work in
// a few loop iterations, for the tests of the step budget: Go compiles
// copy to one wasm memory.copy and clear to one memory.fill, whatever
// their length, so each round of Copy or Fill moves 32 MiB in a handful
// of iterations.
package main

import "github.com/durabox/durabox/guest-sdk/durabox"

// size is what each round copies or clears.
const size = 32 << 20

func init() {
	// Copy copies 32 MiB rounds times.
	durabox.RegisterOrchestration("Copy", func(ctx *durabox.Context, rounds int) (byte, error) {
		src, dst := make([]byte, size), make([]byte, size)
		for i := range rounds {
			src[i%size] = byte(i)
			copy(dst, src)
		}
		return dst[0], nil
	})
	// Fill clears 32 MiB rounds times.
	durabox.RegisterOrchestration("Fill", func(ctx *durabox.Context, rounds int) (byte, error) {
		buf := make([]byte, size)
		for i := range rounds {
			buf[i%size] = byte(i)
			clear(buf)
		}
		return buf[0], nil
	})
}

func main() {}
