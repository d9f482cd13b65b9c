package sqlstore

import (
	"context"
	"time"

	"github.com/durabox/durabox/store"
)

// AppendAudit stores an audit record and returns its ID (store.Audit).
// The record commits unsynced: it is written after the change it records
// has been answered, and waiting for the disk would put a second sync on
// the path of every change (an update, a purge) for a record whose loss
// loses nothing acknowledged; the change's next durable commit, the host's
// or any other, makes it durable. A change that commits with its record
// (store.NewInstance.Audit, Enqueue's audit) syncs both.
func (s *Store) AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error) {
	var id int64
	err := s.a.WriteUnsynced(ctx, func(ctx context.Context, tx Tx) error {
		return tx.row(ctx, auditInsert+` RETURNING id`, auditArgs(r)...).Scan(&id)
	})
	if err != nil {
		return 0, s.errorf("append to the audit log (%s %s by %s): %w", r.Action, r.Target, r.Token, err)
	}
	return id, nil
}

// auditInsert stores an audit record, given auditArgs.
const auditInsert = `INSERT INTO audit_log (at, token, role, action, target, status, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

func auditArgs(r store.AuditRecord) []any {
	return []any{Nanos(r.Time), r.Token, r.Role, r.Action, r.Target, r.Status, r.Outcome, r.Detail}
}

// InsertAudit stores r, the audit record of the change its transaction
// makes; nothing when r is nil.
func (t Tx) InsertAudit(ctx context.Context, r *store.AuditRecord) error {
	if r == nil {
		return nil
	}
	return t.send(ctx, auditInsert, auditArgs(*r)...)
}

// ListAudit returns the audit records q selects, newest first
// (store.Audit).
func (s *Store) ListAudit(ctx context.Context, q store.AuditQuery) (store.AuditPage, error) {
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = store.DefaultAuditLimit
	case limit > store.MaxAuditLimit:
		limit = store.MaxAuditLimit
	}
	where, args := `1 = 1`, []any{}
	add := func(cond string, arg any) { where, args = where+` AND `+cond, append(args, arg) }
	if !q.Since.IsZero() {
		add(`at >= ?`, Nanos(q.Since))
	}
	if q.Token != "" {
		add(`token = ?`, q.Token)
	}
	if q.Action != "" {
		add(`action = ?`, q.Action)
	}
	if q.Target != "" {
		add(`target = ?`, q.Target)
	}
	if q.Before > 0 {
		add(`id < ?`, q.Before)
	}
	var page store.AuditPage
	err := s.a.Read(ctx, func(db DB) error {
		rows, err := db.Query(ctx, s.d.Rebind(`SELECT id, at, token, role, action, target, status, outcome, detail FROM audit_log
			WHERE `+where+` ORDER BY id DESC LIMIT ?`), append(args, limit+1)...)
		page.Records, err = collect(rows, err, func(r Rows) (store.AuditRecord, error) {
			var rec store.AuditRecord
			var at int64
			err := r.Scan(&rec.ID, &at, &rec.Token, &rec.Role, &rec.Action, &rec.Target, &rec.Status, &rec.Outcome, &rec.Detail)
			rec.Time = FromNanos(at)
			return rec, err
		})
		return err
	})
	if err != nil {
		return store.AuditPage{}, s.errorf("read the audit log: %w", err)
	}
	if len(page.Records) > limit {
		page.Records = page.Records[:limit]
		page.Next = page.Records[limit-1].ID
	}
	return page, nil
}

// DeleteAudit deletes the audit records older than before (store.Audit).
func (s *Store) DeleteAudit(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.a.Write(ctx, func(ctx context.Context, tx Tx) (err error) {
		n, err = tx.exec(ctx, `DELETE FROM audit_log WHERE at < ?`, Nanos(before))
		return err
	})
	if err != nil {
		return 0, s.errorf("delete audit records before %s: %w", before.Format(time.RFC3339), err)
	}
	return n, nil
}
