package server

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"time"
)

// dashboardFiles are the dashboard's files: plain HTML, CSS and JavaScript
// modules, written by hand and served as they are (see RATIONALE.md, "Why
// is the dashboard written without a framework?"). The dashboard reads
// everything through the JSON API, with the token the person gives it.
//
//go:embed dashboard
var dashboardFiles embed.FS

// dashboardPolicy lets the dashboard's pages load their own files and
// call the API of the host that serves them, and nothing else.
const dashboardPolicy = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// dashboard serves the dashboard's page, at /.
func (s *server) dashboard(w http.ResponseWriter, r *http.Request) {
	s.serveDashboardFile(w, r, "index.html")
}

// dashboardFile serves one of the dashboard's files, at /ui/{file}.
func (s *server) dashboardFile(w http.ResponseWriter, r *http.Request) {
	s.serveDashboardFile(w, r, r.PathValue("file"))
}

func (s *server) serveDashboardFile(w http.ResponseWriter, r *http.Request, name string) {
	data, err := fs.ReadFile(dashboardFiles, "dashboard/"+name)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: %s; the dashboard is at /", errNoRoute, r.URL.Path))
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", dashboardPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// The files change with the binary: ask again each time.
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}
