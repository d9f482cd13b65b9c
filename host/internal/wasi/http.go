package wasi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/durabox/durabox/abi"
)

// maxHTTPBody bounds the body of a request or a response, in bytes.
const maxHTTPBody = 16 << 20

// HTTPFunctions are the host's HTTP capability (module abi.ImportModule).
var HTTPFunctions = []Function{
	{Name: abi.ImportHTTPRequest, Params: params(2), Call: httpRequest},
	{Name: abi.ImportHTTPResponse, Params: params(1), Call: httpResponse},
}

// AllowHTTP lets a real environment make HTTP requests to hosts: names as
// in a URL, "example.com" (any port) or "example.com:8080" (that port only).
// A deterministic environment never makes requests.
func (e *Env) AllowHTTP(hosts []string) {
	e.allowHTTP = map[string]bool{}
	for _, h := range hosts {
		e.allowHTTP[strings.ToLower(h)] = true
	}
	// No redirects: each hop must pass the allow-list too, and the
	// activity's own client follows them through this capability.
	e.httpClient = &http.Client{Timeout: 5 * time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// httpRequest performs the request at (addr, len) and keeps the encoded
// response for httpResponse; it returns the response's length.
func httpRequest(ctx context.Context, e *Env, m Memory, a []uint64) uint32 {
	raw, ok := m.Read(uint32(a[0]), uint32(a[1]))
	var res *abi.HTTPResponse
	switch req, err := abi.DecodeHTTPRequest(raw); {
	case !ok:
		res = &abi.HTTPResponse{Error: "durabox: the HTTP request is outside the guest's memory"}
	case err != nil:
		res = &abi.HTTPResponse{Error: "durabox: the HTTP request does not decode: " + err.Error()}
	default:
		res = e.roundTrip(ctx, req)
	}
	e.pending = abi.EncodeHTTPResponse(res)
	return uint32(len(e.pending))
}

// httpResponse copies the kept response to addr.
func httpResponse(_ context.Context, e *Env, m Memory, a []uint64) uint32 {
	if !m.Write(uint32(a[0]), e.pending) {
		return uint32(EFAULT)
	}
	e.pending = nil
	return 0
}

func (e *Env) roundTrip(ctx context.Context, r *abi.HTTPRequest) *abi.HTTPResponse {
	if e.deterministic {
		return &abi.HTTPResponse{Error: "durabox: orchestrations cannot make HTTP requests, which would not replay; make the request in an activity"}
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &abi.HTTPResponse{Error: fmt.Sprintf("durabox: %q is not an http or https URL", r.URL)}
	}
	host := strings.ToLower(u.Host)
	if !e.allowHTTP[host] && !e.allowHTTP[strings.ToLower(u.Hostname())] {
		return &abi.HTTPResponse{Error: fmt.Sprintf("durabox: HTTP request to %s refused: the host is not on the allow-list; start durabox serve with --allow-http %s", host, host)}
	}
	if len(r.Body) > maxHTTPBody {
		return &abi.HTTPResponse{Error: fmt.Sprintf("durabox: the request body is %d bytes, over the %d-byte limit", len(r.Body), maxHTTPBody)}
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return &abi.HTTPResponse{Error: "durabox: " + err.Error()}
	}
	for _, h := range r.Header {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if req.Header.Get("traceparent") == "" {
		// The attempt's span, when the host traces: the server's spans
		// join the instance's trace. A guest's own traceparent stands.
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	resp, err := e.httpClient.Do(req)
	if err != nil {
		return &abi.HTTPResponse{Error: "durabox: " + err.Error()}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
	if err != nil {
		return &abi.HTTPResponse{Error: "durabox: read the response: " + err.Error()}
	}
	if len(body) > maxHTTPBody {
		return &abi.HTTPResponse{Error: fmt.Sprintf("durabox: the response body from %s is over the %d-byte limit", host, maxHTTPBody)}
	}
	out := &abi.HTTPResponse{Status: resp.StatusCode, Body: body}
	for k, vs := range resp.Header {
		for _, v := range vs {
			out.Header = append(out.Header, k+": "+v)
		}
	}
	return out
}
