package durabox

import (
	"context"
	"testing"
)

// TestRegisterRefusesNamesAHostRefuses: a name a host would refuse at
// deploy panics at registration, saying why; so does one registered twice.
//
// Not parallel: it registers into the SDK's registry, which the other
// tests read.
func TestRegisterRefusesNamesAHostRefuses(t *testing.T) {
	const rule = ": a name is 1 to 256 bytes of UTF-8 without control characters"
	nothing := func(context.Context, any) (any, error) { return nil, nil }
	tests := []struct {
		name     string
		register func()
		want     string
	}{
		{"an empty orchestration name", func() {
			RegisterOrchestration("", func(*Context, any) (any, error) { return nil, nil })
		}, `durabox: orchestration name "" is empty` + rule},
		{"an activity name that is not UTF-8", func() { RegisterActivity("Charge\xff", nothing) },
			`durabox: activity name "Charge\xff" is not valid UTF-8 (at byte 6)` + rule},
		{"an activity name with a NUL", func() { RegisterActivity("a\x00", nothing) },
			`durabox: activity name "a\x00" holds a control character (U+0000 at byte 1)` + rule},
		{"an activity registered twice", func() { RegisterActivity("Hello", nothing) },
			`durabox: activity "Hello" is registered twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover(); got != tt.want {
					t.Errorf("panicked with %v, want %q", got, tt.want)
				}
			}()
			tt.register()
		})
	}
}
