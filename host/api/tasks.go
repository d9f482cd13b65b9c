package api

import (
	"encoding/json"
	"time"
)

// The bodies of the worker protocol (docs/workers.md): a worker outside
// the host polls for the activity tasks of a task queue, keeps each with
// heartbeats, and completes or fails it, naming it by its token.

// TaskPollRequest is the body of POST /v1/tasks/poll.
type TaskPollRequest struct {
	// Queue is the task queue to take tasks from.
	Queue string `json:"queue"`
	// Activities are the activity names the worker serves; none means
	// any.
	Activities []string `json:"activities,omitempty"`
	// Max is the most tasks to take, 1 to 64 (0: 1).
	Max int `json:"max,omitempty"`
}

// TaskPollResponse answers POST /v1/tasks/poll: the tasks leased, none
// when the wait ran out first.
type TaskPollResponse struct {
	Tasks []Task `json:"tasks"`
}

// Task is an activity task leased to a worker.
type Task struct {
	// Token names the task and its lease in the worker's later requests.
	// Whoever holds it acts for the worker until the lease ends.
	Token      string          `json:"token"`
	Queue      string          `json:"queue"`
	Activity   string          `json:"activity"`
	InstanceID string          `json:"instanceId"`
	Input      json.RawMessage `json:"input"`
	// Attempt counts deliveries of the task, from 1: one above 1 means an
	// earlier one may have run, in part or whole.
	Attempt int `json:"attempt"`
	// LastHeartbeat is the details of the last heartbeat an earlier
	// attempt sent, if any, for this one to resume from.
	LastHeartbeat json.RawMessage `json:"lastHeartbeat,omitempty"`
	// HeartbeatTimeoutMs, when not 0, is how long the attempt may go
	// without a heartbeat before it is over and the task goes to another
	// worker.
	HeartbeatTimeoutMs int64 `json:"heartbeatTimeoutMs,omitempty"`
	// LeaseMs is how long the lease lasts without a heartbeat.
	LeaseMs int64 `json:"leaseMs"`
	// Deadline ends the attempt: a heartbeat after it fails the attempt,
	// and no heartbeat renews the lease past it.
	Deadline time.Time `json:"deadline"`
	// CompletionToken completes the attempt from outside, once the worker
	// has said its outcome comes later (POST /v1/tasks/{token}/pending):
	// whoever holds it completes or fails the task before the deadline.
	CompletionToken string `json:"completionToken"`
	// Traceparent, when the host exports traces (durabox serve
	// --otlp-endpoint), is the W3C Trace Context of the host's span of
	// the attempt, in the trace of its instance: the worker's span of the
	// attempt is its child (docs/tracing.md).
	Traceparent string `json:"traceparent,omitempty"`
}

// HeartbeatRequest is the body of POST /v1/tasks/{token}/heartbeat.
type HeartbeatRequest struct {
	// Details (JSON), if set, are kept for the task's next attempt.
	Details json.RawMessage `json:"details,omitempty"`
}

// HeartbeatResponse answers a heartbeat.
type HeartbeatResponse struct {
	// CancelRequested is set once the task's result is no longer wanted
	// (the orchestration cancelled the call, or its instance ended): the
	// worker should stop, clean up and fail the task.
	CancelRequested bool `json:"cancelRequested"`
	// LeaseMs is how long the renewed lease lasts.
	LeaseMs int64 `json:"leaseMs"`
}

// CompleteTaskRequest is the body of POST /v1/tasks/{token}/complete.
type CompleteTaskRequest struct {
	Result json.RawMessage `json:"result"`
}

// FailTaskRequest is the body of POST /v1/tasks/{token}/fail.
type FailTaskRequest struct {
	// Message says what went wrong; Details may hold more, such as a
	// stack.
	Message string `json:"message"`
	Details string `json:"details,omitempty"`
	// Type names the kind of error, as durabox.NewError's does: a retry
	// policy's non-retryable types are matched against it.
	Type string `json:"type,omitempty"`
}

// TaskQueue describes a task queue (GET /v1/queue's taskQueues): its
// tasks waiting for a worker and those a worker runs, and when a worker
// last polled it through the host that answers (absent: none since it
// started).
type TaskQueue struct {
	Name     string     `json:"name"`
	Waiting  int        `json:"waiting"`
	Running  int        `json:"running"`
	LastPoll *time.Time `json:"lastPoll,omitempty"`
}

// PendingActivity is an activity call an instance waits on
// (InstanceDetails.Activities).
type PendingActivity struct {
	Activity string `json:"activity"`
	// Queue is its task queue; absent: it runs in the module, on a host.
	Queue string `json:"queue,omitempty"`
	// Attempt counts the attempts begun (those that failed and were
	// retried among them); Running says whether one runs now (else the
	// task waits for a worker, or for its next attempt).
	Attempt int  `json:"attempt"`
	Running bool `json:"running"`
	// TimeoutMs is the deadline of each attempt, in milliseconds, when the
	// orchestration set one (else the host's, serve --activity-timeout).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// LastError is the message of the last attempt that failed and was
	// retried, and NextRetry, while the call waits for its next attempt,
	// when that may begin (its retry policy's wait).
	LastError string     `json:"lastError,omitempty"`
	NextRetry *time.Time `json:"nextRetry,omitempty"`
	// LastHeartbeat is the details of the last heartbeat an attempt sent.
	LastHeartbeat json.RawMessage `json:"lastHeartbeat,omitempty"`
	Since         time.Time       `json:"since"`
	// NoWorker, when set, says that no worker has polled its queue
	// through the host that answers since it started.
	NoWorker bool `json:"noWorker,omitempty"`
}
