package server

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
)

const batchExample = `{"action": "cancel", "reason": "orders of a withdrawn offer", "rate": 50}`

// startBatch starts a batch of the action the body names on the instances
// the query's filter selects (201), or with dryRun, answers with how many
// and which it would take (200).
func (s *server) startBatch(w http.ResponseWriter, r *http.Request) {
	var req api.BatchRequest
	if err := s.readJSON(w, r, batchExample, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	if len(q) == 0 {
		s.fail(w, r, fmt.Errorf("%w: say which instances the batch takes, with the filters of GET /v1/instances in the query (where, status, name, …): "+
			"POST /v1/batches?where=customer%%20%%3D%%20%%22c-42%%22", api.ErrBadInput))
		return
	}
	f, err := parseFilter(q, "batch")
	if err == nil {
		err = s.parseWaits(q, &f)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	filter := q.Encode()
	if req.DryRun {
		d, err := s.api.DryRunBatch(r.Context(), f, req)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		noteChange(r, "", fmt.Sprintf("dry run: %s would take %d instances matching %s", req.Action, d.Matched, filter))
		s.reply(w, r, http.StatusOK, d)
		return
	}
	b, err := s.api.StartBatch(r.Context(), f, filter, req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	noteChange(r, strconv.FormatInt(b.ID, 10), fmt.Sprintf("%s of %d instances matching %s", b.Action, b.Matched, filter))
	s.reply(w, r, http.StatusCreated, b)
}

// batches answers with the newest batches.
func (s *server) batches(w http.ResponseWriter, r *http.Request) {
	all, err := s.api.Batches(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, api.BatchList{Batches: all})
}

// batchID reads the batch id of the request's path.
func batchID(r *http.Request) (int64, error) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("%w: the batch id %s is not a number from 1; durabox batch list shows them", api.ErrBadInput, abi.Quote(v))
	}
	return id, nil
}

// batch answers with a batch as it stands.
func (s *server) batch(w http.ResponseWriter, r *http.Request) {
	id, err := batchID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	b, err := s.api.Batch(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, b)
}

// stopBatch stops a running batch and answers with it.
func (s *server) stopBatch(w http.ResponseWriter, r *http.Request) {
	id, err := batchID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	b, err := s.api.StopBatch(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	noteChange(r, "", fmt.Sprintf("stopped after %d of %d instances", b.Done+b.Failed+b.Skipped, b.Matched))
	s.reply(w, r, http.StatusOK, b)
}
