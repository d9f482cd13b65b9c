package server

import (
	"net/http"

	"github.com/durabox/durabox/abi"
	"github.com/durabox/durabox/host/api"
)

const scheduleExample = `{"name": "nightly", "cron": "0 3 * * *", "timezone": "Europe/Paris", "orchestration": "Report", "input": {"day": "yesterday"}}`

// createSchedule creates a schedule (201).
func (s *server) createSchedule(w http.ResponseWriter, r *http.Request) {
	var req api.ScheduleRequest
	if err := s.readJSON(w, r, scheduleExample, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	noteChange(r, req.Name, "orchestration "+abi.Quote(req.Orchestration))
	sc, err := s.api.CreateSchedule(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusCreated, sc)
}

// schedules answers with every schedule.
func (s *server) schedules(w http.ResponseWriter, r *http.Request) {
	all, err := s.api.Schedules(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, api.ScheduleList{Schedules: all})
}

// schedule answers with a schedule and its last runs.
func (s *server) schedule(w http.ResponseWriter, r *http.Request) {
	sc, err := s.api.Schedule(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, sc)
}

// deleteSchedule deletes a schedule and answers with it as it was.
func (s *server) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	sc, err := s.api.Schedule(r.Context(), r.PathValue("name"))
	if err == nil {
		err = s.api.DeleteSchedule(r.Context(), sc.Name)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, sc)
}

// pauseSchedule pauses a schedule, with an optional note, and answers
// with it.
func (s *server) pauseSchedule(w http.ResponseWriter, r *http.Request) {
	var req api.PauseRequest
	if err := s.readJSON(w, r, `{"note": "the report's database is down"}`, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Note != "" {
		noteChange(r, "", "note "+abi.Quote(req.Note))
	}
	s.changedSchedule(w, r, s.api.PauseSchedule(r.Context(), r.PathValue("name"), req.Note))
}

// resumeSchedule resumes a schedule and answers with it.
func (s *server) resumeSchedule(w http.ResponseWriter, r *http.Request) {
	s.changedSchedule(w, r, s.api.ResumeSchedule(r.Context(), r.PathValue("name")))
}

// changedSchedule answers a change of a schedule that returned err with
// the schedule as it now stands.
func (s *server) changedSchedule(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.schedule(w, r)
}

// triggerSchedule starts a run now and answers with it (201).
func (s *server) triggerSchedule(w http.ResponseWriter, r *http.Request) {
	run, err := s.api.TriggerSchedule(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	noteChange(r, "", "run "+run.InstanceID)
	s.reply(w, r, http.StatusCreated, run)
}
