package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/durabox/durabox/host/api"
)

// AuditRequest asks Audit for a page of the audit log.
type AuditRequest struct {
	// Since, when not zero, keeps the records at or after it.
	Since time.Time
	// Token, Action and Target, when not empty, keep the records of that
	// token name, action (such as "cancel") and target (an instance id,
	// a module hash, a schedule's name).
	Token, Action, Target string
	// Before continues a listing: the Next of the page before.
	Before int64
	// Limit is the most records in the page; zero means the host's
	// default, 100.
	Limit int
}

// Audit returns a page of the host's audit log, newest first: every
// change made through its API, who made it and when (the admin token
// only).
func (c *Client) Audit(ctx context.Context, req AuditRequest) (api.AuditResponse, error) {
	q := url.Values{}
	if !req.Since.IsZero() {
		q.Set("since", req.Since.Format(time.RFC3339Nano))
	}
	for k, v := range map[string]string{"token": req.Token, "action": req.Action, "target": req.Target} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if req.Before > 0 {
		q.Set("before", strconv.FormatInt(req.Before, 10))
	}
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	path := "/v1/audit"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var r api.AuditResponse
	err := c.do(ctx, "audit", http.MethodGet, path, "", nil, &r)
	return r, err
}
