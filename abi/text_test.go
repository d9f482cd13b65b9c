package abi

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	t.Parallel()
	const rule = ": a name is 1 to 256 bytes of UTF-8 without control characters"
	tests := []struct {
		name, value, want string
	}{
		{"plain", "Charge card", ""},
		{"non-ASCII", "Bestätigung ✓", ""},
		{"U+FFFD itself", "\uFFFD", ""},
		{"the longest", strings.Repeat("é", 128), ""},
		{"empty", "", `activity name "" is empty` + rule},
		{"one byte too long", strings.Repeat("n", 257), `activity name "` + strings.Repeat("n", 64) + `"… is 257 bytes` + rule},
		{"a stray byte", "Charge\xff", `activity name "Charge\xff" is not valid UTF-8 (at byte 6)` + rule},
		{"a cut rune", "caf\xc3", `activity name "caf\xc3" is not valid UTF-8 (at byte 3)` + rule},
		{"an encoded surrogate", "a\xed\xa0\x80", `activity name "a\xed\xa0\x80" is not valid UTF-8 (at byte 1)` + rule},
		{"NUL", "a\x00", `activity name "a\x00" holds a control character (U+0000 at byte 1)` + rule},
		{"a newline", "a\nb", `activity name "a\nb" holds a control character (U+000A at byte 1)` + rule},
		{"DEL", "\x7f", `activity name "\x7f" holds a control character (U+007F at byte 0)` + rule},
		{"C1", "é\u0085", `activity name "é\u0085" holds a control character (U+0085 at byte 2)` + rule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkText(t, CheckName("activity name", tt.value), tt.want)
		})
	}
}

func TestCheckText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value, want string
	}{
		{"empty", "", ""},
		{"lines and tabs", "a\n\tb\x00", ""},
		{"long", strings.Repeat("x", 1<<20), ""},
		{"a stray byte", "ok \xfe", `custom status "ok \xfe" is not valid UTF-8 (at byte 3): a text is UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkText(t, CheckText("custom status", tt.value), tt.want)
		})
	}
}

func TestCheckReason(t *testing.T) {
	t.Parallel()
	const rule = ": a reason is at most 1024 bytes of UTF-8"
	tests := []struct {
		name, value, want string
	}{
		{"empty", "", ""},
		{"the longest", strings.Repeat("r", 1024), ""},
		{"too long", strings.Repeat("r", 100<<10), `cancel reason "` + strings.Repeat("r", 64) + `"… is 102400 bytes` + rule},
		{"a stray byte", "\x80", `cancel reason "\x80" is not valid UTF-8 (at byte 0)` + rule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkText(t, CheckReason("cancel reason", tt.value), tt.want)
		})
	}
}

// checkText checks err against want: nil for "", else a *TextError that
// reads want.
func checkText(t *testing.T, err error, want string) {
	t.Helper()
	var te *TextError
	switch {
	case want == "" && err != nil:
		t.Errorf("refused: %v", err)
	case want != "" && (!errors.As(err, &te) || err.Error() != want):
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, s, want string
	}{
		{"short", "a\"b", `"a\"b"`},
		{"64 bytes", strings.Repeat("x", 64), `"` + strings.Repeat("x", 64) + `"`},
		{"65 bytes", strings.Repeat("x", 65), `"` + strings.Repeat("x", 64) + `"…`},
		// A rune across the cut is left out whole.
		{"a rune across the cut", strings.Repeat("x", 63) + "é", `"` + strings.Repeat("x", 63) + `"…`},
		{"invalid bytes", strings.Repeat("\xff", 100), `"` + strings.Repeat(`\xff`, 64) + `"…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quote(tt.s); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
