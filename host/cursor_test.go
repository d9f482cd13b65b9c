package host_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/durabox/durabox/host"
)

// TestListRefusesACursorItDidNotGive pages through the instances over
// HTTP, then asks for pages after cursors the host did not give (made up,
// cut short, changed): each is refused (400) saying so, where an empty
// page would read as the end of the listing.
func TestListRefusesACursorItDidNotGive(t *testing.T) {
	t.Parallel()
	h := startHost(t, host.Options{})
	h.deploy(t, "examples/wasm/hello")
	for range 3 {
		h.start(t, "Greeting", `"page"`)
	}
	srv := serveAPI(t, h, nil)

	status, body := webRequest{method: "GET", path: "/v1/instances?limit=2"}.send(t, srv.URL)
	var first struct {
		Instances []json.RawMessage
		Next      string
	}
	if err := json.Unmarshal([]byte(body), &first); status != 200 || err != nil || len(first.Instances) != 2 || first.Next == "" {
		t.Fatalf("the first page: %d %s; want 2 instances and a next page", status, body)
	}
	next := url.QueryEscape(first.Next)
	tests := []webRequest{
		{name: "the cursor given", path: "/v1/instances?limit=2&cursor=" + next, wantStatus: 200, want: `"instances":[{"id":`},
		{name: "the cursor given, for children", path: "/v1/instances?parent=none&cursor=" + next, wantStatus: 200, want: `{"instances":[]}`},
	}
	for _, bad := range []string{"garbage", "1.2", "-1.-1", "0.0", first.Next[:len(first.Next)-1], first.Next + "0", changed(first.Next)} {
		tests = append(tests,
			webRequest{name: "cursor " + bad, path: "/v1/instances?cursor=" + url.QueryEscape(bad), wantStatus: 400,
				want: "bad input: the cursor " + quote(bad) + " is not one this host gave; start again without it"},
			webRequest{name: "children's cursor " + bad, path: "/v1/instances?parent=x&cursor=" + url.QueryEscape(bad), wantStatus: 400,
				want: "is not one this host gave"})
	}
	for _, w := range tests {
		w.method = "GET"
		status, body := w.send(t, srv.URL)
		w.check(t, status, body)
	}
}

// changed returns s with its first character changed.
func changed(s string) string {
	c := byte('A')
	if s[0] == c {
		c = 'B'
	}
	return string(c) + s[1:]
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
