package host

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/ijson"
	"github.com/durabox/durabox/host/internal/size"
	"github.com/durabox/durabox/store"
)

// Workers outside the host. An activity call that names a task queue
// (durabox.OnQueue, the module's DefaultQueue, or the host's
// Options.ActivityQueues) is not run by the host: its task waits on that
// queue for a worker, which polls for it through the API (PollTasks),
// keeps it with heartbeats (HeartbeatTask) and hands back its outcome
// (CompleteTask, FailTask), naming it by the token the poll gave. The
// token carries the lease: whoever holds it acts for the worker that
// polled, until the lease ends. docs/workers.md describes the protocol.

// route returns tasks on the queues Options.ActivityQueues maps their
// names to, where they name none.
func (h *Host) route(tasks []engine.ActivityTask) []engine.ActivityTask {
	if len(h.opts.ActivityQueues) == 0 {
		return tasks
	}
	out := slices.Clone(tasks)
	for i, t := range out {
		if q, ok := h.opts.ActivityQueues[t.Name]; ok && t.Queue == "" {
			out[i].Queue = q
		}
	}
	return out
}

// maxPollTasks is the most tasks one poll hands out.
const maxPollTasks = 64

// pollRecheck is how often a waiting poll looks at the store again, for
// the tasks other hosts queue (this host's own wake it at once).
const pollRecheck = time.Second

// taskToken is what a worker's token for a task holds: enough of the
// task's lease to act on it without reading the store first.
type taskToken struct {
	ID          int64  `json:"i"`
	Lock        string `json:"l"`
	InstanceID  string `json:"n"`
	ExecutionID int64  `json:"e"`
	ScheduleID  int64  `json:"s"`
	Name        string `json:"a"`
	Queue       string `json:"q"`
	// HeartbeatMs is the call's heartbeat timeout, the lease each
	// heartbeat renews; Deadline (Unix nanoseconds) ends the attempt.
	HeartbeatMs int64 `json:"h,omitempty"`
	Deadline    int64 `json:"d"`
	// Retry is the call's retry policy, and Failures the attempts of it
	// that failed before this one, for the retry decision (finish).
	Retry    *engine.RetryPolicy `json:"r,omitempty"`
	Failures int                 `json:"f,omitempty"`
	// Leased is when the poll leased the task (Unix nanoseconds).
	Leased int64 `json:"t"`
	// Secret is the secret of the attempt's completion token, should it
	// wait to be completed from outside (AwaitTask).
	Secret string `json:"c"`
	// Span is the id (hex) of the host's span of the attempt, which the
	// worker's span is a child of; empty when tracing is off.
	Span string `json:"p,omitempty"`
	// Delivery counts the deliveries of the task since it was queued or
	// retried (store.ActivityWork.Attempt), for the span.
	Delivery int `json:"k,omitempty"`
}

// completionPrefix begins every completion token (completionToken),
// which a task token never does.
const completionPrefix = "dbxc."

// completionToken is the token that completes the task id from outside,
// when it waits with secret (store.Activities.AwaitCompletion).
func completionToken(id int64, secret string) string {
	return completionPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)+"."+secret))
}

// decodeCompletionToken returns the task and the secret a completion
// token names.
func decodeCompletionToken(s string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, completionPrefix))
	idText, secret, ok := strings.Cut(string(b), ".")
	id, idErr := strconv.ParseInt(idText, 10, 64)
	if err != nil || !ok || idErr != nil || secret == "" {
		return 0, "", fmt.Errorf("%w: %s is not a completion token: pass the token durabox.CompleteLater gave, as it was", api.ErrBadInput, abi.Quote(s))
	}
	return id, secret, nil
}

// newSecret returns a random secret for a completion token.
func newSecret() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func encodeTaskToken(t taskToken) string {
	b, _ := json.Marshal(t) // a struct of numbers and strings always encodes
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeTaskToken(s string) (taskToken, error) {
	var t taskToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil || t.ID == 0 || t.Lock == "" {
		return t, fmt.Errorf("%w: %s is not a task token: pass the token a poll (POST /v1/tasks/poll) gave, as it was", api.ErrBadInput, abi.Quote(s))
	}
	return t, nil
}

// work is the store's view of the task the token names.
func (t taskToken) work() *store.ActivityWork {
	return &store.ActivityWork{ID: t.ID, LockToken: t.Lock, InstanceID: t.InstanceID, ExecutionID: t.ExecutionID, Failures: t.Failures,
		Task: engine.ActivityTask{ScheduleID: t.ScheduleID, Name: t.Name, Queue: t.Queue, HeartbeatTimeout: time.Duration(t.HeartbeatMs) * time.Millisecond, Retry: t.Retry}}
}

// queues is what the host knows of the task queues workers poll: when a
// worker last polled each (for durabox status, the dashboard and the
// metrics), and the polls waiting, which a commit that queues tasks there
// wakes.
type queues struct {
	mu     sync.Mutex
	polled map[string]time.Time
	queued *changes
}

func newQueues() *queues { return &queues{polled: map[string]time.Time{}, queued: newChanges()} }

func (q *queues) sawPoll(queue string, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.polled[queue] = now
}

// lastPolls returns when a worker last polled each queue, through this
// host.
func (q *queues) lastPolls() map[string]time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return maps.Clone(q.polled)
}

// PollTasks leases up to max (1 to 64; 0 means 1) tasks of the task queue
// p.Queue of the names p.Names serves (any, if it has none) and returns
// them, waiting up to wait for one when there is none; none when the wait
// runs out. Each task's lease lasts the host's lease (Options.Lease), or
// its call's heartbeat timeout if it set one, and no longer than the
// attempt's deadline.
func (h *Host) PollTasks(ctx context.Context, p store.TaskPoll, max int, wait time.Duration) ([]api.Task, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", api.ErrBadInput, err)
	}
	switch {
	case max == 0:
		max = 1
	case max < 0 || max > maxPollTasks:
		return nil, fmt.Errorf("%w: max is %d; a poll takes 1 to %d tasks", api.ErrBadInput, max, maxPollTasks)
	}
	deadline := time.Now().Add(wait)
	for {
		changed, stop := h.queues.queued.watch(p.Queue)
		now := h.opts.Clock()
		h.queues.sawPoll(p.Queue, now)
		tasks, err := h.leaseTasks(ctx, p, max, now)
		if err != nil || len(tasks) > 0 {
			stop()
			return tasks, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			stop()
			return nil, nil
		}
		t := time.NewTimer(min(left, pollRecheck))
		select {
		case <-ctx.Done():
			t.Stop()
			stop()
			return nil, ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
		stop()
	}
}

// leaseTasks leases the tasks of one poll. A task past its poison limit
// is failed, not handed out.
func (h *Host) leaseTasks(ctx context.Context, p store.TaskPoll, max int, now time.Time) ([]api.Task, error) {
	ws, err := h.st.LockQueuedActivities(ctx, now, h.opts.Lease, max, p)
	if err != nil {
		return nil, err
	}
	tasks := make([]api.Task, 0, len(ws))
	for _, w := range ws {
		if failure, ok := h.poisoned(w); ok {
			h.record(ctx, w, h.finish(ctx, w, outcome{result: failure, final: true}))
			continue
		}
		if w.Unanswered {
			h.record(ctx, w, h.finish(ctx, w, outcome{result: unanswered(w)}))
			continue
		}
		timeout := h.attemptTimeout(w)
		span, traceparent := h.trace.leased(w)
		tok := taskToken{Span: span, Delivery: w.Attempt, ID: w.ID, Lock: w.LockToken, InstanceID: w.InstanceID, ExecutionID: w.ExecutionID, ScheduleID: w.Task.ScheduleID,
			Name: w.Task.Name, Queue: w.Task.Queue, HeartbeatMs: w.Task.HeartbeatTimeout.Milliseconds(), Deadline: now.Add(timeout).UnixNano(), Leased: now.UnixNano(),
			Retry: w.Task.Retry, Failures: w.Failures, Secret: newSecret()}
		tasks = append(tasks, api.Task{
			Token: encodeTaskToken(tok), Queue: w.Task.Queue, Activity: w.Task.Name, InstanceID: w.InstanceID, Input: w.Task.Input,
			Attempt: w.Failures + w.Attempt, LastHeartbeat: w.Heartbeat, HeartbeatTimeoutMs: tok.HeartbeatMs,
			LeaseMs: store.LeaseFor(w, h.opts.Lease).Milliseconds(), Deadline: now.Add(timeout), CompletionToken: completionToken(w.ID, tok.Secret),
			Traceparent: traceparent,
		})
	}
	return tasks, nil
}

// HeartbeatTask renews the lease of the task token names, for its call's
// heartbeat timeout or else the host's lease, and keeps details (JSON; nil
// keeps those there) for the task's next attempt. It reports whether the
// task's result is still wanted: once it is not (the orchestration
// cancelled the call, or its instance ended or moved on), the worker
// should stop and fail the task. A heartbeat past the attempt's deadline
// fails the attempt for it, as the host fails an attempt of its own that
// runs too long, and returns ErrTaskLost.
func (h *Host) HeartbeatTask(ctx context.Context, token string, details json.RawMessage) (api.HeartbeatResponse, error) {
	t, err := decodeTaskToken(token)
	if err != nil {
		return api.HeartbeatResponse{}, err
	}
	if err := checkTaskPayload(t.Name, "heartbeat details", details, h.opts.MaxPayload); err != nil {
		return api.HeartbeatResponse{}, err
	}
	now := h.opts.Clock()
	w := t.work()
	if now.UnixNano() > t.Deadline {
		err := h.finishTask(ctx, w, engine.Event{Kind: engine.ActivityFailed, ScheduleID: t.ScheduleID, Failure: &engine.Failure{
			Message: fmt.Sprintf("activity %q timed out: its attempt ran past its deadline, %s after a worker took it", t.Name, time.Duration(t.Deadline-t.Leased))}}, t)
		if err == nil {
			err = fmt.Errorf("%w: the attempt ran past its deadline and was failed; stop it", api.ErrTaskLost)
		}
		return api.HeartbeatResponse{}, err
	}
	lease := store.LeaseFor(w, h.opts.Lease)
	if until := time.Unix(0, t.Deadline); now.Add(lease).After(until) {
		lease = until.Sub(now)
	}
	if err := h.st.Heartbeat(ctx, w, details, now, lease); err != nil {
		return api.HeartbeatResponse{}, taskError(err)
	}
	wanted, err := h.stillWanted(ctx, t)
	if err != nil {
		return api.HeartbeatResponse{}, err
	}
	return api.HeartbeatResponse{CancelRequested: !wanted, LeaseMs: lease.Milliseconds()}, nil
}

// stillWanted reports whether the result of the task t names is still
// wanted: its instance is in the task's execution and has not ended, and
// the orchestration has not cancelled the call (as far as this host saw).
func (h *Host) stillWanted(ctx context.Context, t taskToken) (bool, error) {
	if h.attempts.cancelled(attemptKey{t.InstanceID, t.ExecutionID, t.ScheduleID}) {
		return false, nil
	}
	inst, err := h.st.GetInstance(ctx, t.InstanceID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return inst.ExecutionID == t.ExecutionID && !inst.Status.IsTerminal(), nil
}

// CompleteTask records the result (JSON) of the task token names: a
// worker's task token, or a completion token (durabox.CompleteLater).
func (h *Host) CompleteTask(ctx context.Context, token string, result json.RawMessage) error {
	if strings.HasPrefix(token, completionPrefix) {
		if err := checkTaskPayload("completed from outside", "result", result, h.opts.MaxPayload); err != nil {
			return err
		}
		return h.completeFromOutside(ctx, token, engine.Event{Kind: engine.ActivityCompleted, Result: orNull(result)})
	}
	t, err := decodeTaskToken(token)
	if err != nil {
		return err
	}
	if err := checkTaskPayload(t.Name, "result", result, h.opts.MaxPayload); err != nil {
		return err
	}
	return h.finishTask(ctx, t.work(), engine.Event{Kind: engine.ActivityCompleted, ScheduleID: t.ScheduleID, Result: orNull(result)}, t)
}

// orNull is result, or JSON null when it is empty.
func orNull(result json.RawMessage) json.RawMessage {
	if len(result) == 0 {
		return json.RawMessage("null")
	}
	return result
}

// completeFromOutside records the outcome of the task a completion token
// names. The outcome is final: no retry policy applies to it.
func (h *Host) completeFromOutside(ctx context.Context, token string, result engine.Event) error {
	id, secret, err := decodeCompletionToken(token)
	if err != nil {
		return err
	}
	if err := h.st.CompleteFromOutside(ctx, id, secret, result, h.opts.Clock()); err != nil {
		return taskError(err)
	}
	h.orchestrationWork.Notify()
	return nil
}

// AwaitTask lets go of the task token names, whose attempt's outcome comes
// from outside, by the completion token the poll gave with it, before the
// attempt's deadline (POST /v1/tasks/{token}/pending).
func (h *Host) AwaitTask(ctx context.Context, token string) error {
	t, err := decodeTaskToken(token)
	if err != nil {
		return err
	}
	if t.Secret == "" {
		return fmt.Errorf("%w: the task has no completion token", api.ErrBadInput)
	}
	return taskError(h.st.AwaitCompletion(ctx, t.work(), t.Secret, time.Unix(0, t.Deadline)))
}

// FailTask records the failure of the attempt of the task token names.
func (h *Host) FailTask(ctx context.Context, token string, f engine.Failure) error {
	if f.Message == "" {
		return fmt.Errorf("%w: a failure needs a message that says what went wrong", api.ErrBadInput)
	}
	if err := abi.CheckFailure(&abi.Failure{Message: f.Message, Details: f.Details, Type: f.Type}); err != nil {
		return fmt.Errorf("%w: %v", api.ErrBadInput, err)
	}
	if strings.HasPrefix(token, completionPrefix) {
		return h.completeFromOutside(ctx, token, engine.Event{Kind: engine.ActivityFailed, Failure: &f})
	}
	t, err := decodeTaskToken(token)
	if err != nil {
		return err
	}
	return h.finishTask(ctx, t.work(), engine.Event{Kind: engine.ActivityFailed, ScheduleID: t.ScheduleID, Failure: &f}, t)
}

// finishTask ends an attempt a worker ran with result, as finish does
// for all: a failure may be retried, by the call's policy.
func (h *Host) finishTask(ctx context.Context, w *store.ActivityWork, result engine.Event, t taskToken) error {
	if err := h.finish(ctx, w, outcome{result: result, ran: time.Since(time.Unix(0, t.Leased))}); err != nil {
		return taskError(err)
	}
	h.trace.workerEnded(ctx, t, result)
	return nil
}

// taskError is err as a worker should see it: a lost lease is
// ErrTaskLost.
func taskError(err error) error {
	if errors.Is(err, store.ErrLeaseLost) {
		return fmt.Errorf("%w: %v", api.ErrTaskLost, err)
	}
	return err
}

// checkTaskPayload refuses a worker's JSON (what names it) that is not
// JSON, or is larger than the host takes.
func checkTaskPayload(activity, what string, b json.RawMessage, max int) error {
	if len(b) > max {
		return fmt.Errorf("%w: the %s of activity %q is %s, over %s", api.ErrTooLarge, what, activity, size.MiB(len(b)), size.PayloadLimit(max))
	}
	if len(b) > 0 {
		if err := ijson.Check("the "+what, b); err != nil {
			return fmt.Errorf("%w: activity %q: %v", api.ErrBadInput, activity, err)
		}
	}
	return nil
}

// TaskQueuePolls returns when a worker last polled each task queue
// through this host, since it started.
func (h *Host) TaskQueuePolls() map[string]time.Time { return h.queues.lastPolls() }

// pendingShown is how many activity calls GET /v1/instances/{id} lists.
const pendingShown = 100

// PendingActivities describes the activity calls instance id waits on,
// oldest first, up to 100.
func (h *Host) PendingActivities(ctx context.Context, id string) ([]api.PendingActivity, error) {
	tasks, err := h.st.ActivityTasks(ctx, id, h.opts.Clock(), pendingShown)
	if err != nil {
		return nil, err
	}
	polls := h.queues.lastPolls()
	out := make([]api.PendingActivity, len(tasks))
	for i, t := range tasks {
		_, polled := polls[t.Queue]
		out[i] = api.PendingActivity{Activity: t.Name, Queue: t.Queue, Attempt: t.Failures + t.Attempt, Running: t.Running, LastHeartbeat: t.Heartbeat,
			Since: t.EnqueuedAt, NoWorker: t.Queue != "" && !t.Running && !polled, TimeoutMs: t.Timeout.Milliseconds()}
		if t.LastFailure != nil {
			out[i].LastError = t.LastFailure.Message
		}
		if !t.RetryAt.IsZero() {
			out[i].NextRetry = &t.RetryAt
		}
	}
	return out, nil
}
