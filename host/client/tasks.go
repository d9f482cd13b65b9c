package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/durabox/durabox/host/api"
)

// The worker protocol (docs/workers.md): a worker outside the host polls
// for tasks, keeps each with heartbeats, and completes or fails it. Package
// worker runs activities on it; these are its requests, for any other
// program.

// PollTasks leases up to req.Max tasks of req.Queue (of the activities
// req.Activities names; any, if none), waiting up to 30s for one; it
// returns none when the wait runs out.
func (c *Client) PollTasks(ctx context.Context, req api.TaskPollRequest) ([]api.Task, error) {
	var resp api.TaskPollResponse
	if err := c.postJSON(ctx, "poll for tasks", "/v1/tasks/poll?wait="+longPoll.String(), req, &resp); err != nil {
		return nil, err
	}
	return resp.Tasks, nil
}

// Heartbeat renews the lease of the task token names and keeps details
// (JSON; nil keeps those there) for its next attempt. Its answer says
// whether the task's result is still wanted. An error for which
// IsTaskLost holds means the worker no longer holds the task.
func (c *Client) Heartbeat(ctx context.Context, token string, details json.RawMessage) (api.HeartbeatResponse, error) {
	var resp api.HeartbeatResponse
	err := c.postJSON(ctx, "heartbeat", taskPath(token, "heartbeat"), api.HeartbeatRequest{Details: details}, &resp)
	return resp, err
}

// CompleteTask records the result (JSON) of the task token names: a
// worker's task token, or a completion token (durabox.CompleteLater).
func (c *Client) CompleteTask(ctx context.Context, token string, result json.RawMessage) error {
	if result == nil {
		result = json.RawMessage("null")
	}
	return c.postJSON(ctx, "complete the task", taskPath(token, "complete"), api.CompleteTaskRequest{Result: result}, nil)
}

// FailTask records the failure of the attempt of the task token names.
func (c *Client) FailTask(ctx context.Context, token string, f api.FailTaskRequest) error {
	return c.postJSON(ctx, "fail the task", taskPath(token, "fail"), f, nil)
}

// AwaitTask tells the host that the outcome of the task token names comes
// from outside, by its completion token (api.Task.CompletionToken), before
// its deadline: the worker is done with it.
func (c *Client) AwaitTask(ctx context.Context, token string) error {
	return c.postJSON(ctx, "leave the task to its completion token", taskPath(token, "pending"), struct{}{}, nil)
}

// IsTaskLost reports whether err is the host's answer to a worker that
// acts on a task it no longer holds (409): completed already, or its
// lease ended and it went to another worker.
func IsTaskLost(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusConflict
}

func taskPath(token, op string) string { return "/v1/tasks/" + url.PathEscape(token) + "/" + op }

// postJSON posts v, as JSON, to path and decodes the answer into out (nil:
// none).
func (c *Client) postJSON(ctx context.Context, op, path string, v, out any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("durabox: %s: encode the request: %w", op, err)
	}
	return c.do(ctx, op, http.MethodPost, path, "application/json", bytes.NewReader(body), out)
}
