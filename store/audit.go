package store

import (
	"context"
	"time"
)

// AuditRecord is one change asked of a host through its API (a deploy, a
// start, a cancel, a schedule's pause…), or one such request refused:
// who asked, when, for what, and what came of it. The server writes one
// for each request that changes something: a start that creates its
// instance commits its record with the instance (NewInstance.Audit), and
// a raise, a cancel or a terminate with its message (Queue.Enqueue's
// audit), so that no change is acknowledged whose record may yet be lost;
// any other request's record is appended (AppendAudit) once it has been
// answered.
type AuditRecord struct {
	// ID is the record's place in the log, given by AppendAudit or the
	// create that stores it: from 1, increasing.
	ID int64
	// Time is when the request was answered, or for a record committed
	// with its change, when the change was made.
	Time time.Time
	// Token is the name of the token the request carried, and Role what
	// that token may do (admin, read, worker); "anonymous" and admin on a
	// host that asks for no token.
	Token, Role string
	// Action is what was asked: deploy, start, raise, update, cancel,
	// terminate, reset, upgrade, purge, remove-module, schedule-create,
	// schedule-pause, schedule-resume, schedule-trigger, schedule-delete,
	// batch (a batch started, or its dry run), batch-stop.
	Action string
	// Target is what it was asked of: an instance id, a module hash, a
	// schedule's name; empty when the request names none (a purge by
	// filter, an upgrade of every instance of a module names its module).
	Target string
	// Status is the HTTP status of the answer, and Outcome "ok" when it
	// was 2xx, "refused" when 4xx, "failed" when 5xx.
	Status  int
	Outcome string
	// Detail says more: the error answered, or what the change was (the
	// event raised, the reason given, how many instances a purge took).
	Detail string
}

// AuditQuery selects audit records, newest first.
type AuditQuery struct {
	// Since, when not zero, keeps the records at or after it.
	Since time.Time
	// Token, Action and Target, when not empty, keep the records with
	// that token name, action and target.
	Token, Action, Target string
	// Before, when not zero, keeps the records whose ID is below it: the
	// Next of the page before.
	Before int64
	// Limit is the most records a page holds; zero or less means
	// DefaultAuditLimit, and more than MaxAuditLimit means MaxAuditLimit.
	Limit int
}

// The sizes of a page of audit records.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// AuditPage is one page of audit records, newest first.
type AuditPage struct {
	Records []AuditRecord
	// Next, when not zero, is the AuditQuery.Before of the next page.
	Next int64
}

// Audit keeps the audit log. The API's server appends to it; GET
// /v1/audit reads it; the host's retention sweep deletes old records.
type Audit interface {
	// AppendAudit stores r (its ID is given) and returns its ID.
	AppendAudit(ctx context.Context, r AuditRecord) (int64, error)
	// ListAudit returns the records q selects, newest first.
	ListAudit(ctx context.Context, q AuditQuery) (AuditPage, error)
	// DeleteAudit deletes the records older than before and returns how
	// many.
	DeleteAudit(ctx context.Context, before time.Time) (int64, error)
}
