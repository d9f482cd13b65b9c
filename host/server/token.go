package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Token is one bearer token a server accepts, with the name that stands
// for its holder in the audit log and in the histories of the instances
// it changes, and its role.
type Token struct {
	// Name names the token's holder, such as "alice" or "deploy-bot":
	// letters, digits and . _ @ -, up to 64 of them. Empty means
	// DefaultName's.
	Name string
	// Secret is what the request sends, as "Authorization: Bearer
	// SECRET": at least 16 characters, no white space and no ':'.
	Secret string
	// Role is what the token may do: RoleAdmin (everything; the default
	// when empty), RoleRead (GET) or RoleWorker (the worker protocol's
	// routes, /v1/tasks/...).
	Role string
}

// The roles of a token.
const (
	RoleAdmin  = "admin"
	RoleRead   = "read"
	RoleWorker = "worker"
)

// roles are the roles a token may have, and the access each gives.
var roles = map[string]access{RoleAdmin: admin, RoleRead: read, RoleWorker: worker}

// namePattern is what a token's name may hold.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

// DefaultName is the name of a token given without one: its role and the
// first 8 hex digits of the secret's SHA-256 ("admin-1f2e3d4c"), which
// tells two tokens apart without telling anything of the secret.
func DefaultName(role, secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return role + "-" + hex.EncodeToString(sum[:4])
}

// ParseToken reads a token as serve's --token and a token file give it:
// "name=secret", "name=secret:role", or a secret alone (an admin token
// named by DefaultName).
func ParseToken(s string) (Token, error) {
	s = strings.TrimSpace(s)
	name, secret, named := strings.Cut(s, "=")
	if !named || strings.Trim(secret, "=") == "" {
		// A secret alone; base64 ends in '=', which names nothing.
		t := Token{Name: DefaultName(RoleAdmin, s), Secret: s, Role: RoleAdmin}
		return t, t.check()
	}
	t := Token{Name: name, Secret: secret, Role: RoleAdmin}
	if secret, role, ok := strings.Cut(secret, ":"); ok {
		t.Secret, t.Role = secret, role
	}
	return t, t.check()
}

// ParseTokens reads a token file's text: one token a line as ParseToken
// reads it, blank lines and lines beginning with '#' left out. what names
// the file in errors, which name the line.
func ParseTokens(what, text string) ([]Token, error) {
	var out []Token
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := ParseToken(line)
		if err != nil {
			return nil, fmt.Errorf("host: %s, line %d: %s", what, i+1, strings.TrimPrefix(err.Error(), "host: "))
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("host: %s holds no token: write one a line, as name=secret or name=secret:role (role admin, read or worker)", what)
	}
	return out, nil
}

// check says what is wrong with t, a token with its name and role.
func (t Token) check() error {
	switch {
	case !namePattern.MatchString(t.Name):
		return fmt.Errorf("host: the token name %q is not one: use letters, digits and . _ @ -, up to 64 of them, as in alice=SECRET:admin", t.Name)
	case roles[t.Role] == public:
		return fmt.Errorf("host: token %q has the role %q; a role is admin, read or worker, as in %s=SECRET:read", t.Name, t.Role, t.Name)
	case len(t.Secret) < minTokenLength:
		return fmt.Errorf("host: token %q's secret is %d characters; use at least %d random ones (openssl rand -hex 32 makes 64)", t.Name, len(t.Secret), minTokenLength)
	case strings.ContainsAny(t.Secret, " \t\r\n"):
		return fmt.Errorf("host: token %q's secret holds white space; a bearer token cannot", t.Name)
	case strings.Contains(t.Secret, ":"):
		return fmt.Errorf("host: token %q's secret holds ':', which ends a secret before its role; use hex or base64", t.Name)
	}
	return nil
}

// checkTokens fills in the tokens' default names and roles and refuses a
// set a server cannot use: a bad token, a name or a secret given twice,
// or tokens none of which is an admin's.
func checkTokens(ts []Token) error {
	names, secrets := map[string]bool{}, map[string]string{}
	hasAdmin := false
	for i := range ts {
		t := &ts[i]
		if t.Role == "" {
			t.Role = RoleAdmin
		}
		if t.Name == "" {
			t.Name = DefaultName(t.Role, t.Secret)
		}
		if err := t.check(); err != nil {
			return err
		}
		if names[t.Name] {
			return fmt.Errorf("host: two tokens are named %q; give each its own name", t.Name)
		}
		if other, ok := secrets[t.Secret]; ok {
			return fmt.Errorf("host: tokens %q and %q have the same secret; give each its own", other, t.Name)
		}
		names[t.Name], secrets[t.Secret] = true, t.Name
		hasAdmin = hasAdmin || t.Role == RoleAdmin
	}
	if len(ts) > 0 && !hasAdmin {
		return errors.New("host: no token is an admin's: with none, nothing could deploy or start; give one the role admin (name=SECRET, or name=SECRET:admin)")
	}
	return nil
}
