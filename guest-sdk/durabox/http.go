package durabox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/durabox/durabox/abi"
)

// HTTPTransport is an http.RoundTripper that sends requests through the
// host, which performs them for activities, to the hosts on its allow-list
// (durabox serve --allow-http). Orchestrations cannot make requests: their
// requests fail, because the answer would not replay. Use HTTPClient.
type HTTPTransport struct{}

// HTTPClient returns an http.Client whose requests go through the host.
func HTTPClient() *http.Client { return &http.Client{Transport: HTTPTransport{}} }

// RoundTrip implements http.RoundTripper.
func (HTTPTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := &abi.HTTPRequest{Method: req.Method, URL: req.URL.String()}
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			r.Header = append(r.Header, k+": "+v)
		}
	}
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("durabox: read the request body: %w", err)
		}
		r.Body = body
	}
	raw, err := hostHTTP(abi.EncodeHTTPRequest(r))
	if err != nil {
		return nil, err
	}
	res, err := abi.DecodeHTTPResponse(raw)
	if err != nil {
		return nil, fmt.Errorf("durabox: the host's HTTP response does not decode: %w", err)
	}
	if res.Error != "" {
		return nil, errors.New(res.Error)
	}
	resp := &http.Response{
		Status: fmt.Sprintf("%d %s", res.Status, http.StatusText(res.Status)), StatusCode: res.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(res.Body)),
		ContentLength: int64(len(res.Body)), Request: req,
	}
	for _, h := range res.Header {
		k, v, _ := strings.Cut(h, ":")
		resp.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return resp, nil
}
