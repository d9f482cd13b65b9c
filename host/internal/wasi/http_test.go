package wasi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/durabox/durabox/abi"
)

// memory is a guest's linear memory, for calling the functions directly.
type memory []byte

func (m memory) Read(addr, n uint32) ([]byte, bool) {
	if uint64(addr)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[addr : addr+n], true
}

func (m memory) Write(addr uint32, b []byte) bool {
	if uint64(addr)+uint64(len(b)) > uint64(len(m)) {
		return false
	}
	copy(m[addr:], b)
	return true
}

// exchange makes the two calls a guest makes: http_request on the encoded
// request, then http_response into a buffer of the length it returned.
func exchange(t *testing.T, ctx context.Context, e *Env, raw []byte) *abi.HTTPResponse {
	t.Helper()
	n := httpRequest(ctx, e, memory(raw), []uint64{0, uint64(len(raw))})
	out := make(memory, n)
	if errno := httpResponse(ctx, e, out, []uint64{0}); errno != 0 {
		t.Fatalf("http_response: errno %d", errno)
	}
	res, err := abi.DecodeHTTPResponse(out)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// testHeaders keeps the X- headers of a response, which the test server
// sets, sorted, and drops the ones net/http adds (Date, Content-Length, …).
func testHeaders(all []string) []string {
	var out []string
	for _, h := range all {
		if strings.HasPrefix(h, "X-") {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

func TestHTTPCapability(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write(make([]byte, maxHTTPBody+1))
		case "/moved":
			http.Redirect(w, r, "/echo", http.StatusFound)
		default:
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Method", r.Method)
			w.Header().Set("X-In", r.Header.Get("X-In"))
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, "got %s", body)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	hostPort, port := u.Host, u.Port()
	localhost := "localhost:" + port // the same server, under a name not on the lists below

	real := func(allow ...string) func() *Env {
		return func() *Env {
			e := NewReal(nil, nil, nil)
			e.AllowHTTP(allow)
			return e
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		env  func() *Env
		ctx  context.Context
		req  abi.HTTPRequest
		want abi.HTTPResponse
	}{
		{"allowed host:port: method, header and body both ways", real(hostPort), nil,
			abi.HTTPRequest{Method: "POST", URL: srv.URL + "/echo", Header: []string{"X-In: hello"}, Body: []byte("ping")},
			abi.HTTPResponse{Status: 201, Header: []string{"X-In: hello", "X-Method: POST"}, Body: []byte("got ping")}},
		{"allowed host name, any port", real("127.0.0.1"), nil,
			abi.HTTPRequest{Method: "GET", URL: srv.URL + "/echo"},
			abi.HTTPResponse{Status: 201, Header: []string{"X-In: ", "X-Method: GET"}, Body: []byte("got ")}},
		{"redirects come back to the guest, not followed", real(hostPort), nil,
			abi.HTTPRequest{Method: "GET", URL: srv.URL + "/moved"},
			abi.HTTPResponse{Status: 302, Body: []byte("<a href=\"/echo\">Found</a>.\n\n")}},
		{"another port of an allowed host name", real("127.0.0.1:1"), nil,
			abi.HTTPRequest{Method: "GET", URL: srv.URL + "/echo"},
			abi.HTTPResponse{Error: "durabox: HTTP request to " + hostPort + " refused: the host is not on the allow-list; start durabox serve with --allow-http " + hostPort}},
		{"a host off the list", real(hostPort), nil,
			abi.HTTPRequest{Method: "GET", URL: "http://" + localhost + "/echo"},
			abi.HTTPResponse{Error: "durabox: HTTP request to " + localhost + " refused: the host is not on the allow-list; start durabox serve with --allow-http " + localhost}},
		{"no allow-list", real(), nil,
			abi.HTTPRequest{Method: "GET", URL: srv.URL + "/echo"},
			abi.HTTPResponse{Error: "durabox: HTTP request to " + hostPort + " refused: the host is not on the allow-list; start durabox serve with --allow-http " + hostPort}},
		{"orchestration", func() *Env { return NewDeterministic([32]byte{}, nil, nil) }, nil,
			abi.HTTPRequest{Method: "GET", URL: srv.URL + "/echo"},
			abi.HTTPResponse{Error: "durabox: orchestrations cannot make HTTP requests, which would not replay; make the request in an activity"}},
		{"not an http URL", real(hostPort), nil,
			abi.HTTPRequest{Method: "GET", URL: "file:///etc/passwd"},
			abi.HTTPResponse{Error: `durabox: "file:///etc/passwd" is not an http or https URL`}},
		{"response body over the limit", real(hostPort), nil,
			abi.HTTPRequest{Method: "GET", URL: srv.URL + "/big"},
			abi.HTTPResponse{Error: fmt.Sprintf("durabox: the response body from %s is over the 16777216-byte limit", hostPort)}},
		{"request body over the limit", real(hostPort), nil,
			abi.HTTPRequest{Method: "POST", URL: srv.URL + "/echo", Body: make([]byte, maxHTTPBody+1)},
			abi.HTTPResponse{Error: "durabox: the request body is 16777217 bytes, over the 16777216-byte limit"}},
		{"the call's context ends the request", real(hostPort), cancelled,
			abi.HTTPRequest{Method: "GET", URL: srv.URL + "/echo"},
			abi.HTTPResponse{Error: `durabox: Get "` + srv.URL + `/echo": context canceled`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			got := exchange(t, ctx, tt.env(), abi.EncodeHTTPRequest(&tt.req))
			got.Header = testHeaders(got.Header)
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("response\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// The two calls fail safely when the guest hands over bad regions or bytes.
func TestHTTPCapabilityBadCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := NewReal(nil, nil, nil)
	e.AllowHTTP(nil)
	tests := []struct {
		name      string
		mem       memory
		addr, len uint64
		wantError string
	}{
		{"request outside memory", make(memory, 4), 2, 8, "durabox: the HTTP request is outside the guest's memory"},
		// Field 2 (url, wire type 1) claims 5 bytes and has 1.
		{"request does not decode", memory{0x05, 0x05, 'h'}, 0, 3,
			"durabox: the HTTP request does not decode: abi: malformed message: HTTPRequest: field 2: length 5 runs past the end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := httpRequest(ctx, e, tt.mem, []uint64{tt.addr, tt.len})
			out := make(memory, n)
			if errno := httpResponse(ctx, e, out, []uint64{0}); errno != 0 {
				t.Fatalf("http_response: errno %d", errno)
			}
			res, err := abi.DecodeHTTPResponse(out)
			if err != nil || res.Error != tt.wantError || res.Status != 0 {
				t.Fatalf("response %+v, %v; want the error %q", res, err, tt.wantError)
			}
		})
	}
	t.Run("response to an address outside memory", func(t *testing.T) {
		// Refused (e allows no host), so nothing leaves the machine.
		raw := abi.EncodeHTTPRequest(&abi.HTTPRequest{Method: "GET", URL: "http://127.0.0.1:1/"})
		n := httpRequest(ctx, e, memory(raw), []uint64{0, uint64(len(raw))})
		if errno := httpResponse(ctx, e, make(memory, n), []uint64{1}); errno != uint32(EFAULT) {
			t.Fatalf("errno %d, want EFAULT (%d)", errno, EFAULT)
		}
	})
}
