package host

import (
	"context"

	"github.com/durabox/durabox/store"
)

// AppendAudit records a change asked of the host through its API in the
// store's audit log, at the host's clock (package host/server calls it
// once it has answered the request). With Options.Retention, the sweep
// deletes records older than the retention.
func (h *Host) AppendAudit(ctx context.Context, r store.AuditRecord) error {
	if r.Time.IsZero() {
		r.Time = h.opts.Clock()
	}
	_, err := h.st.AppendAudit(ctx, r)
	return err
}

// Audit returns a page of the audit log, newest first.
func (h *Host) Audit(ctx context.Context, q store.AuditQuery) (store.AuditPage, error) {
	return h.st.ListAudit(ctx, q)
}
