package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/durabox/durabox/host/api"
)

// The calls of changing code under running instances: replaying an
// instance on a module, upgrading the instances of one module to another,
// exporting a repro bundle, and resetting an instance.

// Replay replays one execution of an instance on a module, in the host's
// sandbox, and reports whether it reproduces the history. Nothing changes.
func (c *Client) Replay(ctx context.Context, id string, req api.ReplayRequest) (api.ReplayReport, error) {
	q := url.Values{}
	if req.Module != "" {
		q.Set("module", req.Module)
	}
	if req.Execution != 0 {
		q.Set("execution", strconv.FormatInt(req.Execution, 10))
	}
	path := instancePath(id) + "/replay"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var r api.ReplayReport
	err := c.do(ctx, "replay", http.MethodGet, path, "", nil, &r)
	return r, err
}

// Export returns the repro bundle of an instance: the bytes of a .dbx file
// (package host/bundle reads them).
func (c *Client) Export(ctx context.Context, id string) ([]byte, error) {
	var b bytes.Buffer
	err := c.do(ctx, "export", http.MethodGet, instancePath(id)+"/bundle", "", nil, &b)
	return b.Bytes(), err
}

// Reset plans, and unless req.DryRun does, a reset of an instance.
func (c *Client) Reset(ctx context.Context, id string, req api.ResetRequest) (api.ResetPlan, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return api.ResetPlan{}, fmt.Errorf("durabox: reset: %w", err)
	}
	var p api.ResetPlan
	err = c.do(ctx, "reset", http.MethodPost, instancePath(id)+"/reset", "application/json", bytes.NewReader(body), &p)
	return p, err
}

// Upgrade runs an upgrade on the host, calling progress (when not nil)
// with each line of the host's answer as it comes, and returns the whole.
// If the upgrade stopped after it began, the report so far comes with the
// error.
func (c *Client) Upgrade(ctx context.Context, req api.UpgradeRequest, progress func(api.UpgradeLine)) (api.UpgradeReport, error) {
	var report api.UpgradeReport
	body, err := json.Marshal(req)
	if err != nil {
		return report, fmt.Errorf("durabox: upgrade: %w", err)
	}
	err = c.do(ctx, "upgrade", http.MethodPost, "/v1/upgrades", "application/json", bytes.NewReader(body), func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var line api.UpgradeLine
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				return fmt.Errorf("read the host's answer: %w", err)
			}
			if progress != nil {
				progress(line)
			}
			switch {
			case line.Plan != nil:
				report.Plan = *line.Plan
			case line.Result != nil:
				report.Results = append(report.Results, *line.Result)
			case line.Summary != nil:
				report.Summary = *line.Summary
				return nil
			case line.Error != "":
				return fmt.Errorf("the upgrade stopped: %s", line.Error)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("read the host's answer: %w", err)
		}
		return fmt.Errorf("the host's answer ended after %d of %d instances, before the upgrade did (did the host stop?)", len(report.Results), report.Plan.Instances)
	})
	return report, err
}
