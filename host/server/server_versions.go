package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/bundle"
)

// The routes of changing code under running instances: replay, export,
// reset and upgrade.

const (
	upgradeExample = `{"from": "9f72cbb040f5", "to": "2b1f08c3aa10", "dryRun": true}`
	resetExample   = `{"toEvent": 7, "module": "2b1f08c3aa10", "dryRun": true}`
)

func (s *server) replay(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := api.ReplayRequest{Module: q.Get("module")}
	if v := q.Get("execution"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			s.fail(w, r, fmt.Errorf("%w: execution=%s is not an execution number (1, 2, …)", api.ErrBadInput, abi.Quote(v)))
			return
		}
		req.Execution = n
	}
	rep, err := s.api.Replay(r.Context(), r.PathValue("id"), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, rep)
}

func (s *server) export(w http.ResponseWriter, r *http.Request) {
	b, err := s.api.Export(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", b.InstanceID+".dbx"))
	w.WriteHeader(http.StatusOK)
	if err := bundle.Write(w, b); err != nil {
		// The status is sent; the client finds the bundle cut short.
		level := slog.LevelError
		if r.Context().Err() != nil {
			level = slog.LevelInfo // the host is stopping, or the client went away
		}
		s.log.Log(r.Context(), level, "export failed while writing", "instance", b.InstanceID, "err", err)
	}
}

func (s *server) reset(w http.ResponseWriter, r *http.Request) {
	var req api.ResetRequest
	if err := s.readJSON(w, r, resetExample, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	noteChange(r, "", resetDetail(req))
	plan, err := s.api.Reset(r.Context(), r.PathValue("id"), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, plan)
}

// upgrade answers with JSON lines as the upgrade goes (api.UpgradeLine),
// once the host has accepted the request; a refusal is an error answer as
// for any other route.
func (s *server) upgrade(w http.ResponseWriter, r *http.Request) {
	var req api.UpgradeRequest
	if err := s.readJSON(w, r, upgradeExample, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.From == "" {
		s.fail(w, r, fmt.Errorf(`%w: the request has no "from": name the module to upgrade from, or an orchestration`, api.ErrBadInput))
		return
	}
	noteChange(r, req.From, upgradeDetail(req))
	enc := json.NewEncoder(w)
	rc := http.NewResponseController(w)
	started := false
	send := func(line api.UpgradeLine) {
		if !started {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		enc.Encode(line)
		rc.Flush() // each line as it comes
	}
	if _, err := s.api.Upgrade(r.Context(), req, send); err != nil {
		if !started {
			s.fail(w, r, err)
			return
		}
		if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
			s.log.Info("upgrade stopped: its request ended (the host is stopping, or the client went away)", "err", err)
		} else {
			s.log.Error("upgrade stopped", "err", err)
		}
		send(api.UpgradeLine{Error: wireError(err)})
		noteChange(r, "", upgradeDetail(req)+"; stopped: "+wireError(err))
	}
}

// resetDetail says what a reset asked for, for the audit log.
func resetDetail(req api.ResetRequest) string {
	d := fmt.Sprintf("to event %d", req.ToEvent)
	if req.Module != "" {
		d += " on module " + req.Module
	}
	if req.DryRun {
		d += " (dry run)"
	}
	return d
}

// upgradeDetail says what an upgrade asked for, for the audit log.
func upgradeDetail(req api.UpgradeRequest) string {
	d := "to the newest module"
	if req.To != "" {
		d = "to " + req.To
	}
	if len(req.Instances) > 0 {
		d += fmt.Sprintf(", %d instances", len(req.Instances))
	}
	if req.DryRun {
		d += " (dry run)"
	}
	return d
}
