package server

import (
	"reflect"
	"testing"
)

// TestParseTokens: a token file's lines, as serve's --token-file reads
// them, and the line each refusal names.
func TestParseTokens(t *testing.T) {
	t.Parallel()
	const secret, other = "0123456789abcdef0123", "fedcba9876543210fedc"
	tests := []struct {
		name, text string
		want       []Token
		wantErr    string
	}{
		{"named, with roles and comments", "# the team's tokens\nalice=" + secret + "\n\n  bob=" + other + ":read  \nci-bot@example.com=" + secret + "x:worker\n",
			[]Token{{"alice", secret, "admin"}, {"bob", other, "read"}, {"ci-bot@example.com", secret + "x", "worker"}}, ""},
		{"a secret alone, as before names", secret + "\n", []Token{{DefaultName("admin", secret), secret, "admin"}}, ""},
		{"a base64 secret alone, which ends in =", "MDEyMzQ1Njc4OWFiY2RlZg==\n", []Token{{DefaultName("admin", "MDEyMzQ1Njc4OWFiY2RlZg=="), "MDEyMzQ1Njc4OWFiY2RlZg==", "admin"}}, ""},
		{"a role that is none", "alice=" + secret + "\nbob=" + other + ":reader\n", nil,
			`host: tokens, line 2: token "bob" has the role "reader"; a role is admin, read or worker, as in bob=SECRET:read`},
		{"no name", "=" + secret + "\n", nil,
			`host: tokens, line 1: the token name "" is not one: use letters, digits and . _ @ -, up to 64 of them, as in alice=SECRET:admin`},
		{"a short secret", "# c\nalice=short\n", nil,
			`host: tokens, line 2: token "alice"'s secret is 5 characters; use at least 16 random ones (openssl rand -hex 32 makes 64)`},
		{"nothing but comments", "# none yet\n\n", nil,
			"host: tokens holds no token: write one a line, as name=secret or name=secret:role (role admin, read or worker)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseTokens("tokens", tt.text)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseTokens: %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseTokens: %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
	if name := DefaultName("admin", secret); len(name) != len("admin-")+8 || name == "admin-"+secret[:8] {
		t.Errorf("DefaultName: %q; want admin- and 8 hex digits of the secret's hash", name)
	}
}
