package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/durabox/durabox/host/api"
	"github.com/durabox/durabox/host/internal/ijson"
	"github.com/durabox/durabox/host/internal/size"
)

const (
	// maxModuleBytes bounds the module of POST /v1/modules.
	maxModuleBytes = 64 << 20
	// maxEnvBytes bounds the environment of POST /v1/modules.
	maxEnvBytes = 1 << 20
	// jsonOverhead is what a JSON body may hold beside its payload.
	jsonOverhead = 1 << 20
)

// body is a request body read under the handler's limits: at most limit
// bytes, each read within StallTimeout and the whole within BodyTimeout.
// Its errors say what went wrong, as ErrBadInput or ErrTooLarge: none of
// them is the host's fault.
type body struct {
	r        io.Reader
	w        http.ResponseWriter
	rc       *http.ResponseController
	stall    time.Duration
	total    time.Duration
	deadline time.Time
	what     string
	limit    int64
	// why, when set, says where the limit comes from.
	why string
	// announced is the Content-Length (-1 when unknown); got counts the
	// bytes read.
	announced, got int64
}

func (s *server) body(w http.ResponseWriter, r *http.Request, limit int64, what string) *body {
	return &body{r: http.MaxBytesReader(w, r.Body, limit), w: w, rc: http.NewResponseController(w), stall: s.opts.StallTimeout,
		total: s.opts.BodyTimeout, deadline: time.Now().Add(s.opts.BodyTimeout), what: what, limit: limit, announced: r.ContentLength}
}

func (b *body) Read(p []byte) (int, error) {
	// A ResponseWriter that cannot set deadlines (a test's recorder)
	// reads without them.
	deadline := time.Now().Add(b.stall)
	if deadline.After(b.deadline) {
		deadline = b.deadline
	}
	b.rc.SetReadDeadline(deadline)
	n, err := b.r.Read(p)
	b.got += int64(n)
	if err == nil || err == io.EOF {
		return n, err
	}
	// What is left of the body is not read: the connection cannot serve
	// another request after this one.
	b.w.Header().Set("Connection", "close")
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		err = fmt.Errorf("%w: %s is larger than the limit of %s%s", api.ErrTooLarge, b.what, size.MiB(int(b.limit)), b.why)
	case errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(b.deadline):
		err = fmt.Errorf("%w: %s stalled: nothing came for %s after %d bytes%s", api.ErrBadInput, b.what, b.stall, b.got, b.of())
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: %s took longer than %s: %d bytes%s came", api.ErrBadInput, b.what, b.total, b.got, b.of())
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("%w: %s ended early, after %d bytes%s", api.ErrBadInput, b.what, b.got, b.of())
	default:
		err = fmt.Errorf("%w: %s could not be read after %d bytes%s: %v", api.ErrBadInput, b.what, b.got, b.of(), err)
	}
	return n, err
}

// of says how many bytes the client announced, if it did.
func (b *body) of() string {
	if b.announced < 0 {
		return ""
	}
	return " of the " + strconv.FormatInt(b.announced, 10) + " announced"
}

// readAll reads the whole body, then lets the connection read without
// deadline again.
func (b *body) readAll() ([]byte, error) {
	data, err := io.ReadAll(b)
	if err == nil {
		b.done()
	}
	return data, err
}

// done lets the connection read without deadline again, once the body is
// read.
func (b *body) done() { b.rc.SetReadDeadline(time.Time{}) }

// readJSON reads a body that must be exactly one JSON object of v's
// fields, such as example. An empty body is an error unless optional.
func (s *server) readJSON(w http.ResponseWriter, r *http.Request, example string, v any, optional bool) error {
	b := s.body(w, r, int64(s.opts.MaxPayload+jsonOverhead), "the request body")
	b.why = fmt.Sprintf(" (%s, and 1 MiB for the rest of the request)", size.PayloadLimit(s.opts.MaxPayload))
	data, err := b.readAll()
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if optional {
			return nil
		}
		return fmt.Errorf("%w: the request body is empty; send a JSON object such as %s", api.ErrBadInput, example)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: the request body is not a JSON object such as %s: %v", api.ErrBadInput, example, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: the request body goes on after its JSON object", api.ErrBadInput)
	}
	// encoding/json takes invalid UTF-8 and lone surrogates (turning
	// them into U+FFFD) and a name twice (keeping the last): the whole
	// body, names and payloads, must be I-JSON instead.
	if err := ijson.Check("the request body", data); err != nil {
		return fmt.Errorf("%w: %w", api.ErrBadInput, err)
	}
	return nil
}

// deployment is what the body of POST /v1/modules holds.
type deployment struct {
	wasm []byte
	env  []string
	// replaceEnv says the body set the environment: env, or none.
	replaceEnv bool
}

// readDeployment reads the body of POST /v1/modules: the module's bytes
// alone, or multipart/form-data with a "module" file part and, to set the
// environment, "env" fields (KEY=value, repeated) or one "envClear" field
// ("true"). Environment values never travel in the URL: a query that
// tries is refused before the body is read.
func (s *server) readDeployment(w http.ResponseWriter, r *http.Request) (deployment, error) {
	var d deployment
	if len(r.URL.Query()) > 0 {
		return d, fmt.Errorf("%w: POST /v1/modules takes no query; environment values go in a multipart body (durabox deploy --env), never in the URL, where proxies and logs keep them", api.ErrBadInput)
	}
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" {
		wasm, err := s.body(w, r, maxModuleBytes, "the module").readAll()
		d.wasm = wasm
		return d, err
	}
	b := s.body(w, r, maxModuleBytes+maxEnvBytes, "the request body")
	mr := multipart.NewReader(b, params["boundary"])
	var gotModule, envClear bool
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return d, partError(err)
		}
		switch part.FormName() {
		case "module":
			if gotModule {
				return d, fmt.Errorf("%w: the body has two \"module\" parts; send one", api.ErrBadInput)
			}
			gotModule = true
			if d.wasm, err = io.ReadAll(part); err != nil {
				return d, partError(err)
			}
		case "env":
			kv, err := io.ReadAll(io.LimitReader(part, maxEnvBytes))
			if err != nil {
				return d, partError(err)
			}
			d.env, d.replaceEnv = append(d.env, string(kv)), true
		case "envClear":
			v, err := io.ReadAll(io.LimitReader(part, 8))
			if err != nil {
				return d, partError(err)
			}
			if envClear, err = strconv.ParseBool(string(v)); err != nil {
				return d, fmt.Errorf("%w: envClear is %q; it is true or false", api.ErrBadInput, v)
			}
		default:
			return d, fmt.Errorf("%w: the body has a part %q; it takes \"module\", \"env\" and \"envClear\"", api.ErrBadInput, part.FormName())
		}
	}
	b.done()
	switch {
	case !gotModule:
		return d, fmt.Errorf("%w: the body has no \"module\" part: the module's bytes", api.ErrBadInput)
	case envClear && d.replaceEnv:
		return d, fmt.Errorf("%w: the body sets \"env\" and \"envClear\"; \"env\" replaces the whole environment already", api.ErrBadInput)
	}
	d.replaceEnv = d.replaceEnv || envClear
	return d, nil
}

// partError says why a part of a multipart body could not be read: the
// body's own errors say it already.
func partError(err error) error {
	if errors.Is(err, api.ErrBadInput) || errors.Is(err, api.ErrTooLarge) {
		return err
	}
	return fmt.Errorf("%w: the multipart body does not parse: %v", api.ErrBadInput, err)
}
