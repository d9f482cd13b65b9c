package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/testhost"
)

// TestCompleteByToken completes, with durabox complete, an activity that
// waits for its outcome from outside: the result reaches the
// orchestration; the same token again is refused (exit 1), saying why;
// --fail fails another.
func TestCompleteByToken(t *testing.T) {
	t.Parallel()
	tokens := make(chan string, 2)
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tokens <- r.URL.RawQuery }))
	defer tokenSrv.Close()
	u, _ := url.Parse(tokenSrv.URL)
	wasm, err := guestbuild.Wasm("host/testdata/guests/heartbeats")
	if err != nil {
		t.Fatal(err)
	}
	h := testhost.Start(t, host.Options{HTTPAllowList: []string{u.Host}}, wasm)
	handler, err := server.New(h, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	input, _ := json.Marshal(tokenSrv.URL)
	finish := func(id string) (engine.Status, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		inst, err := h.Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if inst.Failure != nil {
			return inst.Status, inst.Failure.Message
		}
		return inst.Status, string(inst.Result)
	}
	for _, tt := range []struct {
		id         string
		args       []string
		out        string
		wantStatus engine.Status
		want       string
	}{
		{"approved", []string{"--result", `"yes"`}, "completed", engine.StatusCompleted, `"yes"`},
		{"declined", []string{"--fail", "the manager said no", "--type", "Declined"}, "failed", engine.StatusFailed, `activity "Approve" failed: the manager said no`},
	} {
		if _, err := h.Start(context.Background(), "Approval", input, tt.id); err != nil {
			t.Fatal(err)
		}
		var token string
		select {
		case token = <-tokens:
		case <-time.After(time.Minute):
			t.Fatal("the activity posted no completion token within a minute")
		}
		// The token may come before the attempt's answer has let the task
		// go: ask until the host takes it.
		var code int
		var stdout, stderr string
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			code, stdout, stderr = durabox(append([]string{"complete", "--addr", srv.URL, token}, tt.args...)...)
			if code == 0 || time.Now().After(deadline) || !strings.Contains(stderr, "does not wait for this token") {
				break
			}
		}
		if code != 0 || strings.TrimSpace(stdout) != tt.out {
			t.Fatalf("complete %s: exit %d, %q, %s; want %q", tt.id, code, stdout, stderr, tt.out)
		}
		if status, got := finish(tt.id); status != tt.wantStatus || got != tt.want {
			t.Fatalf("%s is %s with %s; want %s with %s", tt.id, status, got, tt.wantStatus, tt.want)
		}
		code, _, stderr = durabox("complete", "--addr", srv.URL, token, "--result", `"twice"`)
		if code != 1 || !strings.Contains(stderr, "no such task waits: it was completed already") {
			t.Fatalf("the same token again: exit %d, %s; want 1, saying it was completed already", code, stderr)
		}
	}
}
