package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/durabox/durabox/host/api"
)

// Update sends the update req to instance id (req.Name says which; the
// host takes req.Data as its argument) and returns it once it is answered:
// State says how (Completed with the handler's Result; Failed or Refused
// with a Failure). It waits as long as ctx lets it, asking the host again
// every 30s; when ctx ends first, it returns the update as it last stood,
// with ctx's error. A req without an ID gets one here, so that a caller
// may send the same request again, after a failed connection, without
// running the update twice.
func (c *Client) Update(ctx context.Context, id string, req api.UpdateRequest) (api.Update, error) {
	if req.ID == "" {
		req.ID = newUpdateID()
	}
	body, err := json.Marshal(api.UpdateRequest{Data: req.Data, ID: req.ID})
	if err != nil {
		return api.Update{}, fmt.Errorf("durabox: update: encode the request: %w", err)
	}
	var u api.Update
	path := instancePath(id) + "/updates/" + url.PathEscape(req.Name) + "?wait=" + longPoll.String()
	if err := c.do(ctx, "update", http.MethodPost, path, "application/json", bytes.NewReader(body), &u); err != nil {
		return u, err
	}
	return c.awaitUpdate(ctx, u)
}

// StartWithUpdate is update with start: it starts an orchestration
// instance with req.Update sent to it in the same transaction (or, when
// instance req.ID exists, only sends it the update), and returns the
// update once it is answered, as Update does; its Started says whether
// the instance was started.
func (c *Client) StartWithUpdate(ctx context.Context, req api.StartRequest) (api.Update, error) {
	if req.Update == nil {
		return api.Update{}, fmt.Errorf("durabox: start with an update: the request has no update")
	}
	if req.Update.ID == "" {
		up := *req.Update
		up.ID = newUpdateID()
		req.Update = &up
	}
	body, err := json.Marshal(req)
	if err != nil {
		return api.Update{}, fmt.Errorf("durabox: start: encode the request: %w", err)
	}
	var u api.Update
	if err := c.do(ctx, "start", http.MethodPost, "/v1/instances?wait="+longPoll.String(), "application/json", bytes.NewReader(body), &u); err != nil {
		return u, err
	}
	started := u.Started
	u, err = c.awaitUpdate(ctx, u)
	u.Started = started
	return u, err
}

// GetUpdate returns instance id's update of updateID, an update name, as
// it stands.
func (c *Client) GetUpdate(ctx context.Context, id, name, updateID string) (api.Update, error) {
	var u api.Update
	err := c.do(ctx, "get update", http.MethodGet, instancePath(id)+"/updates/"+url.PathEscape(name)+"/"+url.PathEscape(updateID), "", nil, &u)
	return u, err
}

// awaitUpdate asks the host for u until it is answered, or ctx is done.
func (c *Client) awaitUpdate(ctx context.Context, u api.Update) (api.Update, error) {
	for !u.Answered() {
		var next api.Update
		path := instancePath(u.InstanceID) + "/updates/" + url.PathEscape(u.Name) + "/" + url.PathEscape(u.ID) + "?wait=" + longPoll.String()
		if err := c.do(ctx, "wait for update", http.MethodGet, path, "", nil, &next); err != nil {
			return u, err
		}
		u = next
	}
	return u, nil
}

// newUpdateID returns a random update id.
func newUpdateID() string {
	var b [8]byte
	rand.Read(b[:])
	return "u-" + hex.EncodeToString(b[:])
}
