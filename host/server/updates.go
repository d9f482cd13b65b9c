package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/store"
)

const updateExample = `{"data": {"sku": "A-7", "qty": 2}, "id": "add-a7-1"}`

// update sends an update and answers with it once it is answered (200),
// or as it stands when the wait runs out (202). Its ?wait is how long to
// wait: maxWait when absent.
func (s *server) update(w http.ResponseWriter, r *http.Request) {
	var req api.UpdateRequest
	if err := s.readJSON(w, r, updateExample, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Name != "" && req.Name != r.PathValue("name") {
		s.fail(w, r, fmt.Errorf("%w: the body names update %q and the path %q: leave the body's name out", api.ErrBadInput, req.Name, r.PathValue("name")))
		return
	}
	req.Name = r.PathValue("name")
	d, err := updateWait(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	noteChange(r, "", "update "+abi.Quote(req.Name))
	u, err := s.api.Update(r.Context(), r.PathValue("id"), req, d)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.replyUpdate(w, r, u, nil)
}

// startWithUpdate serves a start with an update (update with start): 201
// when it started the instance, 200 when the instance was there, or 202
// when the wait ran out before the answer.
func (s *server) startWithUpdate(w http.ResponseWriter, r *http.Request, req api.StartRequest) {
	switch {
	case req.Raise != nil:
		s.fail(w, r, fmt.Errorf(`%w: the request has both "raise" and "update"; a start takes one of them`, api.ErrBadInput))
		return
	case req.Update.Name == "":
		s.fail(w, r, fmt.Errorf(`%w: the request's "update" has no "name": say which update to send`, api.ErrBadInput))
		return
	}
	d, err := updateWait(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u, started, err := s.api.StartWithUpdate(r.Context(), req.Module, req.Name, req.Input, req.ID, *req.Update, d)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.replyUpdate(w, r, u, &started)
}

// getUpdate answers with an update; with ?wait, once it is answered or the
// wait has passed.
func (s *server) getUpdate(w http.ResponseWriter, r *http.Request) {
	d, err := parseWait(r.URL.Query().Get("wait"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u, err := s.api.AwaitUpdate(r.Context(), r.PathValue("id"), r.PathValue("updateId"), d)
	if err == nil && u.Name != r.PathValue("name") {
		err = fmt.Errorf("%w: update %q of %q is an update %q, not %q", api.ErrNotFound, u.ID, u.InstanceID, u.Name, r.PathValue("name"))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.replyUpdate(w, r, u, nil)
}

// handlers answers with the queries and updates an instance handles.
func (s *server) handlers(w http.ResponseWriter, r *http.Request) {
	hs, err := s.api.Handlers(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, hs)
}

// updateWait reads the ?wait of a request that sends an update: maxWait
// when absent.
func updateWait(r *http.Request) (time.Duration, error) {
	if r.URL.Query().Get("wait") == "" {
		return maxWait, nil
	}
	return parseWait(r.URL.Query().Get("wait"))
}

// replyUpdate answers with u: 200 once it is answered (201 when a start
// with it started the instance), 202 while it waits.
func (s *server) replyUpdate(w http.ResponseWriter, r *http.Request, u store.Update, started *bool) {
	code := http.StatusOK
	switch {
	case !u.State.Answered():
		code = http.StatusAccepted
	case started != nil && *started:
		code = http.StatusCreated
	}
	s.reply(w, r, code, api.Update{InstanceID: u.InstanceID, ID: u.ID, Name: u.Name, State: string(u.State), Input: u.Input,
		Result: u.Result, Failure: u.Failure, Started: started, RequestedAt: u.RequestedAt, AnsweredAt: u.AnsweredAt})
}
