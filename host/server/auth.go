package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/identity"
)

// tokens are the bearer tokens a handler accepts, kept as sha256 sums so
// that comparing them takes the same time whatever the token offered and
// however long it is.
type tokens struct {
	known []knownToken
	// none means no token is asked for.
	none bool
}

// knownToken is one token a handler accepts: its secret's sum, who it
// stands for and what it may do.
type knownToken struct {
	sum    [sha256.Size]byte
	caller identity.Caller
	access access
}

// anonymous is who every request is on a host that asks for no token.
var anonymous = identity.Caller{Name: "anonymous", Role: RoleAdmin}

// newTokens keeps ts, which checkTokens accepted.
func newTokens(ts []Token) *tokens {
	t := &tokens{none: len(ts) == 0}
	for _, tok := range ts {
		t.known = append(t.known, knownToken{sum: sha256.Sum256([]byte(tok.Secret)), caller: identity.Caller{Name: tok.Name, Role: tok.Role}, access: roles[tok.Role]})
	}
	return t
}

// grant returns who the request's token stands for and the access it
// gives, or an error that says what is wrong with it (without repeating
// it).
func (t *tokens) grant(r *http.Request) (identity.Caller, access, error) {
	if t.none {
		return anonymous, admin, nil
	}
	header := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(header, " ")
	if header == "" || !strings.EqualFold(scheme, "Bearer") {
		return identity.Caller{}, public, fmt.Errorf("%w: this host asks for a token; send it as \"Authorization: Bearer TOKEN\" (durabox reads it from $DURABOX_TOKEN or --token-file)", errUnauthorized)
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	found := -1
	for i := range t.known { // every one, so that the time taken tells nothing
		if subtle.ConstantTimeCompare(sum[:], t.known[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return identity.Caller{}, public, fmt.Errorf("%w: the token is not one this host accepts", errUnauthorized)
	}
	return t.known[found].caller, t.known[found].access, nil
}

// access answers with the access the request's token gives, so that a
// client (the dashboard) can tell whether it may change anything, and
// whether the host asks for a token at all.
func (s *server) access(w http.ResponseWriter, r *http.Request) {
	tokens := s.tokens.Load()
	caller, granted, _ := tokens.grant(r)
	s.reply(w, r, http.StatusOK, api.AccessResponse{Access: granted.String(), TokenRequired: !tokens.none, Token: caller.Name})
}

// guard serves a route to the requests for this host that no web page
// of another origin sent (checkSource), whose token gives the access the
// route needs, and whose body is of a type it takes (checkBodyType). It
// carries who the token stands for into the request's context (package
// identity), and records a request to a route that changes something in
// the audit log (audited), refused or not, once its token is known.
func (s *server) guard(rt route) http.Handler {
	action := auditActions[rt.method+" "+rt.path]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.checkSource(rt, r); err != nil {
			s.refuse(w, r, err)
			return
		}
		caller, granted, err := s.tokens.Load().grant(r)
		if err == nil {
			err = granted.refuses(rt)
		}
		if err != nil && rt.access > public {
			if granted == public {
				w.Header().Set("WWW-Authenticate", `Bearer realm="durabox"`)
			}
			if action != "" && granted != public {
				s.audited(rt, action, caller, w, r, err)
				return
			}
			s.refuse(w, r, err)
			return
		}
		if caller.Name != "" && caller != anonymous {
			// On a host that asks for no token, nobody is known: the
			// audit log says anonymous, histories say nothing.
			r = r.WithContext(identity.With(r.Context(), caller))
		}
		if err := checkBodyType(rt, r); err == nil && action != "" {
			s.audited(rt, action, caller, w, r, nil)
			return
		} else if err != nil {
			s.refuse(w, r, err)
			return
		}
		rt.serve(s, w, r)
	})
}

// refuses says why a token that gives a may not use the route rt, or
// returns nil when it may: an admin token may use every route, a worker's
// only the worker protocol's (and the public ones), a read-only one only
// those that read (and the public ones).
func (a access) refuses(rt route) error {
	switch {
	case a == admin || rt.access == public || a == rt.access:
		return nil
	case a == worker:
		return fmt.Errorf("%w: this token is a worker's: it may only poll for, heartbeat, complete and fail tasks (/v1/tasks/...); %s %s needs the admin token", errForbidden, rt.method, rt.path)
	case rt.access == worker:
		return fmt.Errorf("%w: this token may only read (GET); %s %s needs a worker's token or the admin token", errForbidden, rt.method, rt.path)
	}
	return fmt.Errorf("%w: this token may only read (GET); %s %s needs the admin token", errForbidden, rt.method, rt.path)
}

// refuse logs a refused request, and answers with why.
func (s *server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Warn("request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "why", err)
	s.fail(w, r, err)
}
