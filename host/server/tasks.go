package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

// Workers is what a server serves workers outside the host (the worker
// protocol, docs/workers.md); host.Host implements it. A server whose API
// does not answers the protocol's routes with 404.
type Workers interface {
	PollTasks(ctx context.Context, p store.TaskPoll, max int, wait time.Duration) ([]api.Task, error)
	HeartbeatTask(ctx context.Context, token string, details json.RawMessage) (api.HeartbeatResponse, error)
	CompleteTask(ctx context.Context, token string, result json.RawMessage) error
	FailTask(ctx context.Context, token string, f engine.Failure) error
	AwaitTask(ctx context.Context, token string) error
	// TaskQueuePolls returns when a worker last polled each task queue
	// through this host.
	TaskQueuePolls() map[string]time.Time
	// PendingActivities describes the activity calls an instance waits
	// on (GET /v1/instances/{id}).
	PendingActivities(ctx context.Context, id string) ([]api.PendingActivity, error)
}

// pollWait is how long a poll waits for a task when its ?wait does not
// say: long enough that an idle worker costs little, short enough to
// pass proxies that cut idle connections at a minute.
const pollWait = 30 * time.Second

const (
	pollExample      = `{"queue": "payments", "activities": ["Charge", "Refund"], "max": 4}`
	heartbeatExample = `{"details": {"done": 40}}`
	completeExample  = `{"result": {"receipt": "r-17"}}`
	failExample      = `{"message": "card declined"}`
)

// workers returns the server's Workers, or fails the request with 404.
func (s *server) workers(w http.ResponseWriter, r *http.Request) (Workers, bool) {
	ws, ok := s.api.(Workers)
	if !ok {
		s.fail(w, r, fmt.Errorf("%w: %s: this host takes no workers outside it", errNoRoute, r.URL.Path))
	}
	return ws, ok
}

// pollTasks leases tasks of a queue to a worker, waiting up to ?wait
// (pollWait when absent) for one.
func (s *server) pollTasks(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workers(w, r)
	if !ok {
		return
	}
	var req api.TaskPollRequest
	if err := s.readJSON(w, r, pollExample, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	d := pollWait
	if q := r.URL.Query().Get("wait"); q != "" {
		var err error
		if d, err = parseWait(q); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	tasks, err := ws.PollTasks(r.Context(), store.TaskPoll{Queue: req.Queue, Names: req.Activities}, req.Max, d)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if tasks == nil {
		tasks = []api.Task{}
	}
	s.reply(w, r, http.StatusOK, api.TaskPollResponse{Tasks: tasks})
}

// heartbeatTask renews a task's lease and says whether its result is
// still wanted.
func (s *server) heartbeatTask(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workers(w, r)
	if !ok {
		return
	}
	var req api.HeartbeatRequest
	if err := s.readJSON(w, r, heartbeatExample, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := ws.HeartbeatTask(r.Context(), r.PathValue("token"), req.Details)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, resp)
}

// completeTask records a task's result.
func (s *server) completeTask(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workers(w, r)
	if !ok {
		return
	}
	var req api.CompleteTaskRequest
	if err := s.readJSON(w, r, completeExample, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := ws.CompleteTask(r.Context(), r.PathValue("token"), req.Result); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// failTask records the failure of a task's attempt.
func (s *server) failTask(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workers(w, r)
	if !ok {
		return
	}
	var req api.FailTaskRequest
	if err := s.readJSON(w, r, failExample, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := ws.FailTask(r.Context(), r.PathValue("token"), engine.Failure{Message: req.Message, Details: req.Details, Type: req.Type}); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// awaitTask lets go of a task whose outcome comes from outside, by its
// completion token.
func (s *server) awaitTask(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workers(w, r)
	if !ok {
		return
	}
	var req struct{}
	if err := s.readJSON(w, r, "{}", &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := ws.AwaitTask(r.Context(), r.PathValue("token")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// taskQueues describes the task queues from the store's counts and, when
// the API serves workers, when each was last polled through this host.
func (s *server) taskQueues(counts []store.TaskQueueStats) []api.TaskQueue {
	byName := map[string]*api.TaskQueue{}
	for _, c := range counts {
		byName[c.Queue] = &api.TaskQueue{Name: c.Queue, Waiting: c.Waiting, Running: c.Running}
	}
	if ws, ok := s.api.(Workers); ok {
		for name, at := range ws.TaskQueuePolls() {
			q := byName[name]
			if q == nil {
				q = &api.TaskQueue{Name: name}
				byName[name] = q
			}
			q.LastPoll = &at
		}
	}
	out := make([]api.TaskQueue, 0, len(byName))
	for _, q := range byName {
		out = append(out, *q)
	}
	slices.SortFunc(out, func(a, b api.TaskQueue) int { return strings.Compare(a.Name, b.Name) })
	return out
}
