package host_test

import (
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
)

// TestHostileGuestsFailOnlyThemselves runs each hostile orchestration on a
// host with a short deadline and a small memory limit, together with a
// healthy instance of the same module started at the same moment: the
// healthy one completes (while the hostile one may still be running), and
// the hostile one fails with its cause named.
func TestHostileGuestsFailOnlyThemselves(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{ActivationTimeout: 4 * time.Second, MemoryLimit: 128 << 20})
	h.deploy(t, "host/testdata/guests/hostile")
	tests := []struct {
		orchestration string
		want          string
	}{
		{"Loop", "orchestration crashed applying event 1: it ran past its 4s deadline for one step (an endless loop?)"},
		{"Allocate", "orchestration crashed applying event 1: it ran out of memory: the limit is 128 MiB per instance"},
		{"Recurse", "orchestration crashed applying event 1: it overflowed its stack (endless recursion?)"},
		{"NilDereference", "panic: runtime error: invalid memory address or nil pointer dereference"},
		{"Exit", "orchestration crashed applying event 1: it called os.Exit(3)"},
		{"ReadFile", "open /etc/hostname: Capabilities insufficient"},
		// net on wasip1 is an in-process fake network: nothing is reachable.
		{"Dial", "dial tcp 127.0.0.1:80: address 127.0.0.1:80: connect: Connection refused"},
		{"Getenv", "HOME is not set: 0 environment variables"},
	}
	for _, tt := range tests {
		t.Run(tt.orchestration, func(t *testing.T) {
			hostile := h.start(t, tt.orchestration, `null`)
			began := time.Now()
			healthy := h.wait(t, h.start(t, "Healthy", `"ok"`))
			t.Logf("the healthy instance beside %s took %s", tt.orchestration, time.Since(began).Round(time.Millisecond))
			if healthy.Status != engine.StatusCompleted || string(healthy.Result) != `"ok"` {
				t.Fatalf("healthy instance beside %s: status %s result %s failure %+v", tt.orchestration, healthy.Status, healthy.Result, healthy.Failure)
			}
			inst := h.wait(t, hostile)
			if inst.Status != engine.StatusFailed || inst.Failure == nil || inst.Failure.Message != tt.want {
				t.Fatalf("status %s failure %+v\nwant failure %q", inst.Status, inst.Failure, tt.want)
			}
		})
	}
}
