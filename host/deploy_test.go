package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/internal/guestbuild"
)

// TestDeployRefusesModulesThatDoNotStart deploys modules whose
// initialization never ends, or panics: deploy refuses each within the
// host's deadline, naming the call that ran past it, or with the panic's
// message. (The test's own minute is only there so that a deploy that
// never returns fails the test instead of hanging it.)
func TestDeployRefusesModulesThatDoNotStart(t *testing.T) {
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
			if !errors.Is(err, host.ErrBadModule) || err.Error() != tt.want {
				t.Errorf("deploy: %v\nwant %q", err, tt.want)
			}
			// Check has the default deadline, 5s.
			want := strings.Replace(tt.want, "1s deadline", "5s deadline", 1)
			if _, err := host.Check(ctx, wasm); err == nil || err.Error() != want {
				t.Errorf("check: %v\nwant %q", err, want)
			}
		})
	}
}
