package api

import "time"

// AuditRecord is one change asked of the host through its API, or one
// refused: the answer to GET /v1/audit holds them, newest first.
type AuditRecord struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"`
	// Token is the name of the token the request carried ("anonymous" on
	// a host that asks for none), Role what it may do.
	Token string `json:"token"`
	Role  string `json:"role"`
	// Action is what was asked: deploy, remove-module, start, raise,
	// update, cancel, terminate, reset, upgrade, purge, schedule-create,
	// schedule-pause, schedule-resume, schedule-trigger, schedule-delete.
	Action string `json:"action"`
	// Target is the instance id, module hash or schedule name it was
	// asked of; empty for a purge by filter.
	Target string `json:"target,omitempty"`
	// Status is the HTTP status answered, Outcome "ok" (2xx), "refused"
	// (4xx) or "failed" (5xx).
	Status  int    `json:"status"`
	Outcome string `json:"outcome"`
	// Detail is what the change was, or the error answered.
	Detail string `json:"detail,omitempty"`
}

// AuditResponse is the answer to GET /v1/audit: a page of records,
// newest first, and the before= of the next page when there is one.
type AuditResponse struct {
	Records []AuditRecord `json:"records"`
	Next    int64         `json:"next,omitempty"`
}
