package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/durabox/durabox/host/api"
)

// tokens are the bearer tokens a handler accepts, kept as sha256 sums so
// that comparing them takes the same time whatever the token offered and
// however long it is.
type tokens struct {
	admin, read, worker [sha256.Size]byte
	// none means no token is asked for.
	none, hasRead, hasWorker bool
}

func newTokens(admin, read, worker string) *tokens {
	return &tokens{admin: sha256.Sum256([]byte(admin)), read: sha256.Sum256([]byte(read)), worker: sha256.Sum256([]byte(worker)),
		none: admin == "", hasRead: read != "", hasWorker: worker != ""}
}

// grant returns the access the request's token gives, or an error that
// says what is wrong with it (without repeating it).
func (t *tokens) grant(r *http.Request) (access, error) {
	if t.none {
		return admin, nil
	}
	header := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(header, " ")
	if header == "" || !strings.EqualFold(scheme, "Bearer") {
		return public, fmt.Errorf("%w: this host asks for a token; send it as \"Authorization: Bearer TOKEN\" (durabox reads it from $DURABOX_TOKEN or --token-file)", errUnauthorized)
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	isAdmin := subtle.ConstantTimeCompare(sum[:], t.admin[:]) == 1
	isRead := subtle.ConstantTimeCompare(sum[:], t.read[:]) == 1 && t.hasRead
	isWorker := subtle.ConstantTimeCompare(sum[:], t.worker[:]) == 1 && t.hasWorker
	switch {
	case isAdmin:
		return admin, nil
	case isRead:
		return read, nil
	case isWorker:
		return worker, nil
	}
	return public, fmt.Errorf("%w: the token is not one this host accepts", errUnauthorized)
}

// access answers with the access the request's token gives, so that a
// client (the dashboard) can tell whether it may change anything, and
// whether the host asks for a token at all.
func (s *server) access(w http.ResponseWriter, r *http.Request) {
	granted, _ := s.tokens.grant(r)
	s.reply(w, r, http.StatusOK, api.AccessResponse{Access: granted.String(), TokenRequired: !s.tokens.none})
}

// guard serves a route to the requests for this host that no web page
// of another origin sent (checkSource), whose token gives the access the
// route needs, and whose body is of a type it takes (checkBodyType).
func (s *server) guard(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.checkSource(rt, r); err != nil {
			s.refuse(w, r, err)
			return
		}
		granted, err := s.tokens.grant(r)
		if err == nil {
			err = granted.refuses(rt)
		}
		if err != nil && rt.access > public {
			if granted == public {
				w.Header().Set("WWW-Authenticate", `Bearer realm="durabox"`)
			}
			s.refuse(w, r, err)
			return
		}
		if err := checkBodyType(rt, r); err != nil {
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
