package server

import (
	"net/http"

	"github.com/durabox/durabox/host/api"
)

// healthz answers that the process is up: a load balancer's liveness
// check. It asks nothing of the host.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	s.reply(w, r, http.StatusOK, api.HealthResponse{Status: "ok"})
}

// readyz answers whether the host serves its work (503 with the reason
// when not): a load balancer's readiness check.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if err := s.api.Ready(r.Context()); err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, api.HealthResponse{Status: "ready"})
}

// serveMetrics serves the metrics in Prometheus's text format.
func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	s.metrics.ServeHTTP(w, r)
}

// version answers GET /v1/version with what the host was built from.
func (s *server) version(w http.ResponseWriter, r *http.Request) {
	s.reply(w, r, http.StatusOK, s.opts.Version)
}
