// Command badinit is a guest whose initialization never ends or panics,
// as its link-time variable mode says ("loop" or "panic"), for the tests
// of deploy: the host must refuse it within its deadline, saying which
// call ran past it, or with the panic's message.
package main

import (
	"github.com/durabox/durabox/guest-sdk/durabox"
)

// mode is set at link time (-X main.mode=loop).
var mode string

// spins counts the rounds of an endless loop, so the compiler keeps it.
var spins int

func init() {
	durabox.RegisterOrchestration("Never", func(ctx *durabox.Context, _ any) (string, error) { return "", nil })
	switch mode {
	case "loop":
		for {
			spins++
		}
	case "panic":
		panic("badinit: the configuration is missing")
	}
}

func main() {}
