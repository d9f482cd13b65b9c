package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/identity"
	"github.com/durabox/durabox/store"
)

// Auditor keeps the audit log of a server: a Host implements it. A server
// whose API does not (package host/client/fakehost's) keeps none, and
// answers GET /v1/audit with 404.
type Auditor interface {
	AppendAudit(ctx context.Context, r store.AuditRecord) error
	Audit(ctx context.Context, q store.AuditQuery) (store.AuditPage, error)
}

// auditActions name the action each route that changes something
// records in the audit log, by its method and path. The worker
// protocol's routes (/v1/tasks/...) are not there: they carry out the
// host's own work, not a change someone asked for; nor are queries.
var auditActions = map[string]string{
	"POST /v1/modules":                       "deploy",
	"DELETE /v1/modules/{hash}":              "remove-module",
	"POST /v1/instances":                     "start",
	"DELETE /v1/instances":                   "purge",
	"DELETE /v1/instances/{id}":              "purge",
	"POST /v1/instances/{id}/events":         "raise",
	"POST /v1/instances/{id}/updates/{name}": "update",
	"POST /v1/instances/{id}/cancel":         "cancel",
	"POST /v1/instances/{id}/terminate":      "terminate",
	"POST /v1/instances/{id}/reset":          "reset",
	"POST /v1/upgrades":                      "upgrade",
	"POST /v1/schedules":                     "schedule-create",
	"DELETE /v1/schedules/{name}":            "schedule-delete",
	"POST /v1/schedules/{name}/pause":        "schedule-pause",
	"POST /v1/schedules/{name}/resume":       "schedule-resume",
	"POST /v1/schedules/{name}/trigger":      "schedule-trigger",
	"POST /v1/batches":                       "batch",
	"POST /v1/batches/{id}/stop":             "batch-stop",
}

// auditNote is a request's audit record in the making: who asked
// (caller) for what (action), to which its handler adds the target when
// the path does not name it (a start's instance id, a deploy's hash), and
// what the change was or why it failed; and, for a change the host
// commits with its record (withRecord), that record.
type auditNote struct {
	caller         identity.Caller
	action         string
	target, detail string
	record         *identity.Record
}

type noteKey struct{}

// note returns the request's audit note, or nil for a request that
// records none.
func note(r *http.Request) *auditNote {
	n, _ := r.Context().Value(noteKey{}).(*auditNote)
	return n
}

// noteChange sets what the request's audit record says of the change it
// made: its target, when not empty, and its detail.
func noteChange(r *http.Request, target, detail string) {
	if n := note(r); n != nil {
		if target != "" {
			n.target = target
		}
		n.detail = detail
	}
}

// withRecord returns the context of a change the host commits in one
// transaction, to which it adds the request's audit record as it stands,
// answered with status: the host commits the record with the change
// (identity.Record), and audited writes none after it. A change the host
// does not make, or a request that records none, is left to audited.
func withRecord(r *http.Request, status int) context.Context {
	n := note(r)
	if n == nil {
		return r.Context()
	}
	n.record = &identity.Record{AuditRecord: n.entry(status)}
	return identity.WithRecord(r.Context(), n.record)
}

// entry is the audit record of a request answered with status, but for
// its time, which the host gives.
func (n *auditNote) entry(status int) store.AuditRecord {
	outcome := "ok"
	switch {
	case status >= http.StatusInternalServerError:
		outcome = "failed"
	case status >= http.StatusBadRequest:
		outcome = "refused"
	}
	return store.AuditRecord{Token: n.caller.Name, Role: n.caller.Role, Action: n.action, Target: n.target, Status: status, Outcome: outcome, Detail: n.detail}
}

// audited serves a request to a route that changes something and
// records it in the audit log once answered, with who asked (caller),
// what and the outcome, unless the host committed the record with the
// change (withRecord); refused says why the token may not, when it may
// not, which is recorded too.
func (s *server) audited(rt route, action string, caller identity.Caller, w http.ResponseWriter, r *http.Request, refused error) {
	n := &auditNote{caller: caller, action: action, target: r.PathValue("id")}
	for _, p := range []string{"hash", "name"} {
		if n.target == "" {
			n.target = r.PathValue(p)
		}
	}
	r = r.WithContext(context.WithValue(r.Context(), noteKey{}, n))
	rec := &recorder{ResponseWriter: w}
	if refused != nil {
		s.refuse(rec, r, refused)
	} else {
		rt.serve(s, rec, r)
	}
	auditor, ok := s.api.(Auditor)
	if !ok || (n.record != nil && n.record.Written) {
		return
	}
	entry := n.entry(rec.status)
	// The change is made whether or not the client still listens.
	if err := auditor.AppendAudit(context.WithoutCancel(r.Context()), entry); err != nil {
		s.log.Error("the audit log did not record a change", "action", action, "target", n.target, "token", caller.Name, "status", rec.status, "err", err)
	}
}

// audit answers with a page of the audit log, newest first, that the
// query's since, token, action and target select; before and limit page.
func (s *server) audit(w http.ResponseWriter, r *http.Request) {
	auditor, ok := s.api.(Auditor)
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: %s: this host keeps no audit log", errNoRoute, r.URL.Path))
		return
	}
	q, err := parseAuditQuery(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, err := auditor.Audit(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	resp := api.AuditResponse{Records: make([]api.AuditRecord, len(page.Records)), Next: page.Next}
	for i, rec := range page.Records {
		resp.Records[i] = api.AuditRecord(rec)
	}
	s.reply(w, r, http.StatusOK, resp)
}

// auditParams are the query parameters of GET /v1/audit.
var auditParams = map[string]bool{"since": true, "token": true, "action": true, "target": true, "before": true, "limit": true}

func parseAuditQuery(r *http.Request) (store.AuditQuery, error) {
	v := r.URL.Query()
	for name := range v {
		if !auditParams[name] {
			return store.AuditQuery{}, fmt.Errorf("%w: GET /v1/audit takes no parameter %s; it takes since, token, action, target, before and limit", api.ErrBadInput, abi.Quote(name))
		}
	}
	q := store.AuditQuery{Token: v.Get("token"), Action: v.Get("action"), Target: v.Get("target")}
	if since := v.Get("since"); since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			return q, fmt.Errorf("%w: since=%s is not a time such as 2026-01-02T15:04:05Z (RFC 3339)", api.ErrBadInput, abi.Quote(since))
		}
		q.Since = t
	}
	for _, p := range []struct {
		name string
		max  int64
		v    func(int64)
	}{{"before", 1 << 62, func(n int64) { q.Before = n }}, {"limit", store.MaxAuditLimit, func(n int64) { q.Limit = int(n) }}} {
		s := v.Get(p.name)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > p.max {
			return q, fmt.Errorf("%w: %s=%s is not a number from 1 to %d", api.ErrBadInput, p.name, abi.Quote(s), p.max)
		}
		p.v(n)
	}
	return q, nil
}
