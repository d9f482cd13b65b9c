package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestDeployRefusesModulesThatDoNotStart deploys modules whose
// initialization never ends, or panics: deploy refuses each within the
// host's deadline, naming the call that ran past it, or with the panic's
// message. (The test's own minute is only there so that a deploy that
// never returns fails the test instead of hanging it.)
func TestDeployRefusesModulesThatDoNotStart(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{ActivationTimeout: time.Second})
	tests := []struct {
		mode, want string
	}{
		{"loop", "host: module refused: it does not start: its initialization (_initialize: package variables and init functions) ran past its 1s deadline (an endless loop?)"},
		{"panic", "host: module refused: it does not start: it crashed: panic: badinit: the configuration is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			wasm, err := guestbuild.Wasm("host/testdata/guests/badinit", "main.mode="+tt.mode)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err = h.Deploy(ctx, wasm)
			if !errors.Is(err, api.ErrBadModule) || err.Error() != tt.want {
				t.Errorf("deploy: %v\nwant %q", err, tt.want)
			}
			// CheckModule has the default deadline, 5s.
			want := strings.Replace(tt.want, "1s deadline", "5s deadline", 1)
			if err := checkOn(t, wasm, host.RuntimeWazero); err == nil || err.Error() != want {
				t.Errorf("check: %v\nwant %q", err, want)
			}
		})
	}
}

// TestDeployRefusesModulesThatDeclareMoreThanTheyHold deploys modules of a
// few bytes that declare gigabytes (4,294,967,295 imports; a data segment
// of 4 GB; a function of 4,294,967,295 locals), or a function body shorter
// than its locals: each made the runtime's decoder ask for that much
// memory (or for -1 bytes, a panic), which ended the host process. Deploy
// refuses each, saying what it declares, and the host deploys on.
func TestDeployRefusesModulesThatDeclareMoreThanTheyHold(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	const header, many = "\x00asm\x01\x00\x00\x00", "\xff\xff\xff\xff\x0f"
	tests := []struct {
		name, wasm, want string
	}{
		{"imports", header + "\x02\x05" + many,
			"host: module refused: sandbox: not a valid wasm module: wasmlimits: section 2: it declares 4294967295 imports, with 0 bytes left to hold them"},
		{"data", header + "\x0b\x07\x01\x01" + many,
			"host: module refused: sandbox: not a valid wasm module: wasmlimits: section 11: data segments 0: it declares 4294967295 bytes of data, with 0 bytes left to hold them"},
		{"locals", header + "\x0a\x0a\x01\x08\x01" + many + "\x7f\x0b",
			"host: module refused: sandbox: not a valid wasm module: wasmlimits: section 10: functions 0: local declarations 0: more than 50000 locals, the limit"},
		// The decoder asked for a body of -1 bytes: a panic.
		{"a body its locals outgrow", header + "\x0a\x06\x01\x03\x01\x01\x63\x00",
			"host: module refused: sandbox: not a valid wasm module: wasmlimits: section 10: functions 0: a body of 3 bytes, whose locals take 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Deploy(context.Background(), []byte(tt.wasm))
			if !errors.Is(err, api.ErrBadModule) || err.Error() != tt.want {
				t.Fatalf("deploy: %v\nwant %s", err, tt.want)
			}
		})
	}
	h.deploy(t, "examples/wasm/hello")
}
