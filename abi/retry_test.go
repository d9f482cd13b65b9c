package abi

import (
	"strings"
	"testing"
)

func TestCheckRetryPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		policy RetryPolicy
		want   string
	}{
		{"the zero policy", RetryPolicy{}, ""},
		{"a full policy", RetryPolicy{MaximumAttempts: 5, InitialIntervalMillis: 100, BackoffThousandths: 1500, MaximumIntervalMillis: 1000, NonRetryable: []string{"Declined"}}, ""},
		{"a coefficient of 1", RetryPolicy{BackoffThousandths: 1000}, ""},
		{"a coefficient under 1", RetryPolicy{BackoffThousandths: 500},
			"retry policy: the backoff coefficient is 0.5; it must be at least 1 (or 0 for the default, 2)"},
		{"an initial interval over a year", RetryPolicy{InitialIntervalMillis: 366 * 24 * 3600 * 1000},
			"retry policy: the initial interval is 8784h0m0s; it must be at most 8760h0m0s"},
		{"a maximum interval beyond a duration", RetryPolicy{MaximumIntervalMillis: 1 << 63},
			"retry policy: the maximum interval is 9223372036854775808ms; it must be at most 8760h0m0s"},
		{"a maximum under the initial", RetryPolicy{InitialIntervalMillis: 2000, MaximumIntervalMillis: 1500},
			"retry policy: the maximum interval (1.5s) is under the initial one (2s); raise it, or leave it 0 for no cap"},
		{"too many types", RetryPolicy{NonRetryable: make([]string, 65)},
			"retry policy: it lists 65 non-retryable error types; at most 64 may be listed"},
		{"an empty type", RetryPolicy{NonRetryable: []string{"Declined", ""}},
			`retry policy: non-retryable error type "" is empty: a name is 1 to 256 bytes of UTF-8 without control characters`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckRetryPolicy(&tt.policy)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("got %v, want %s", err, tt.want)
			}
		})
	}
}

func TestCheckFailureType(t *testing.T) {
	t.Parallel()
	if err := CheckFailure(&Failure{Message: "no", Type: "Declined"}); err != nil {
		t.Fatal(err)
	}
	err := CheckFailure(&Failure{Message: "no", Type: "a\nb"})
	if err == nil || !strings.HasPrefix(err.Error(), `failure type "a\nb" holds a control character`) {
		t.Fatalf("got %v, want a refusal of the type", err)
	}
}
