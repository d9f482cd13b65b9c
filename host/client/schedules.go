package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/durabox/durabox/host/api"
)

// CreateSchedule creates a schedule and returns it, with its next runs.
// The host refuses (400) a cron expression, an interval, a time zone or
// an overlap policy it cannot take, saying why, and (409) a name taken.
func (c *Client) CreateSchedule(ctx context.Context, req api.ScheduleRequest) (api.Schedule, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return api.Schedule{}, fmt.Errorf("durabox: create schedule: encode the request: %w", err)
	}
	var sc api.Schedule
	err = c.do(ctx, "create schedule", http.MethodPost, "/v1/schedules", "application/json", bytes.NewReader(body), &sc)
	return sc, err
}

// Schedules returns every schedule, by name, without their runs.
func (c *Client) Schedules(ctx context.Context) ([]api.Schedule, error) {
	var r api.ScheduleList
	err := c.do(ctx, "list schedules", http.MethodGet, "/v1/schedules", "", nil, &r)
	return r.Schedules, err
}

// Schedule returns a schedule with its last runs, newest first.
func (c *Client) Schedule(ctx context.Context, name string) (api.Schedule, error) {
	var sc api.Schedule
	err := c.do(ctx, "show schedule", http.MethodGet, schedulePath(name), "", nil, &sc)
	return sc, err
}

// PauseSchedule pauses a schedule, for note (which may be empty), and
// returns it.
func (c *Client) PauseSchedule(ctx context.Context, name, note string) (api.Schedule, error) {
	body, err := json.Marshal(api.PauseRequest{Note: note})
	if err != nil {
		return api.Schedule{}, fmt.Errorf("durabox: pause schedule: %w", err)
	}
	var sc api.Schedule
	err = c.do(ctx, "pause schedule", http.MethodPost, schedulePath(name)+"/pause", "application/json", bytes.NewReader(body), &sc)
	return sc, err
}

// ResumeSchedule resumes a paused schedule from its next slot, and
// returns it.
func (c *Client) ResumeSchedule(ctx context.Context, name string) (api.Schedule, error) {
	var sc api.Schedule
	err := c.do(ctx, "resume schedule", http.MethodPost, schedulePath(name)+"/resume", "application/json", nil, &sc)
	return sc, err
}

// TriggerSchedule starts a run of a schedule now and returns it.
func (c *Client) TriggerSchedule(ctx context.Context, name string) (api.ScheduleRun, error) {
	var run api.ScheduleRun
	err := c.do(ctx, "trigger schedule", http.MethodPost, schedulePath(name)+"/trigger", "application/json", nil, &run)
	return run, err
}

// DeleteSchedule deletes a schedule and the record of its runs (the runs'
// instances stay), and returns it as it was.
func (c *Client) DeleteSchedule(ctx context.Context, name string) (api.Schedule, error) {
	var sc api.Schedule
	err := c.do(ctx, "delete schedule", http.MethodDelete, schedulePath(name), "", nil, &sc)
	return sc, err
}

func schedulePath(name string) string { return "/v1/schedules/" + url.PathEscape(name) }
