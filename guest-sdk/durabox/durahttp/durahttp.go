// Package durahttp lets activities make HTTP requests through the Durabox
// host, which performs them for the activity, to the hosts on its
// allow-list (durabox serve --allow-http) only:
//
//	resp, err := durahttp.Client().Get("https://api.example.com/v1/items")
//
// Orchestrations cannot make requests: theirs fail, because the answer
// would not replay; call an activity that makes it.
//
// It is a package of its own so that modules that make no requests do not
// carry net/http, which makes every module bigger and every instance
// slower to start.
package durahttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/durabox/durabox/abi"
)

// Transport is an http.RoundTripper that sends requests through the host.
type Transport struct{}

// Client returns an http.Client whose requests go through the host.
func Client() *http.Client { return &http.Client{Transport: Transport{}} }

// RoundTrip implements http.RoundTripper.
func (Transport) RoundTrip(req *http.Request) (*http.Response, error) {
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
			return nil, fmt.Errorf("durahttp: read the request body: %w", err)
		}
		r.Body = body
	}
	raw, err := hostHTTP(abi.EncodeHTTPRequest(r))
	if err != nil {
		return nil, err
	}
	res, err := abi.DecodeHTTPResponse(raw)
	if err != nil {
		return nil, fmt.Errorf("durahttp: the host's HTTP response does not decode: %w", err)
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
