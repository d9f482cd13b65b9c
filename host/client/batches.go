package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host/api"
)

// BatchFilter selects the instances of a batch: the filters of List.
// It must set something.
type BatchFilter struct {
	Filter
	// StalledFor and WaitingOn are ListRequest's.
	StalledFor time.Duration
	WaitingOn  []engine.WaitKind
}

// StartBatch starts a batch: req.Action on every instance f selects now,
// taken by the host in the order of their ids, at most req.Rate a
// second. With req.DryRun, use DryRunBatch. The host refuses (400) an
// unknown action, a filter it cannot read, or an action without what it
// needs (a raise's event, an upgrade's module), saying which.
func (c *Client) StartBatch(ctx context.Context, f BatchFilter, req api.BatchRequest) (api.Batch, error) {
	var b api.Batch
	err := c.batchRequest(ctx, "start a batch", f, req, &b)
	return b, err
}

// DryRunBatch answers with how many instances a batch of req would take
// and their ids (the first api.MaxDryRunIDs), and starts nothing.
func (c *Client) DryRunBatch(ctx context.Context, f BatchFilter, req api.BatchRequest) (api.BatchDryRun, error) {
	req.DryRun = true
	var d api.BatchDryRun
	err := c.batchRequest(ctx, "dry run of a batch", f, req, &d)
	return d, err
}

func (c *Client) batchRequest(ctx context.Context, op string, f BatchFilter, req api.BatchRequest, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("durabox: %s: encode the request: %w", op, err)
	}
	q := f.values()
	addWaits(q, f.StalledFor, f.WaitingOn)
	return c.do(ctx, op, http.MethodPost, "/v1/batches?"+q.Encode(), "application/json", bytes.NewReader(body), out)
}

// Batches returns the newest batches, newest first.
func (c *Client) Batches(ctx context.Context) ([]api.Batch, error) {
	var r api.BatchList
	err := c.do(ctx, "list batches", http.MethodGet, "/v1/batches", "", nil, &r)
	return r.Batches, err
}

// Batch returns a batch as it stands, with the instances it failed to
// change.
func (c *Client) Batch(ctx context.Context, id int64) (api.Batch, error) {
	var b api.Batch
	err := c.do(ctx, "show batch", http.MethodGet, batchPath(id), "", nil, &b)
	return b, err
}

// StopBatch stops a running batch and returns it. The host refuses (409)
// one that has completed or was stopped.
func (c *Client) StopBatch(ctx context.Context, id int64) (api.Batch, error) {
	var b api.Batch
	err := c.do(ctx, "stop batch", http.MethodPost, batchPath(id)+"/stop", "application/json", nil, &b)
	return b, err
}

func batchPath(id int64) string { return "/v1/batches/" + strconv.FormatInt(id, 10) }
