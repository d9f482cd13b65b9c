package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/durabox/durabox/host/server"
)

// TestTLSCAMeansHTTPS: with --tls-ca, an --addr without a scheme is an
// https address, and an http:// one is refused before anything is sent:
// the token never travels in clear.
//
// Not parallel: it sets $DURABOX_TOKEN and $DURABOX_ADDR (t.Setenv).
func TestTLSCAMeansHTTPS(t *testing.T) {
	const token = "admin-0123456789abcdef0123456789"
	h, _ := newHost(t, false)
	tlsSrv := httptest.NewTLSServer(h.Handler(server.Options{Token: token}))
	defer tlsSrv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}))
	var mu sync.Mutex
	var inClear []string
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		inClear = append(inClear, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	}))
	defer plain.Close()
	t.Setenv("DURABOX_TOKEN", token)

	tests := []struct {
		name, env string
		args      []string
		wantCode  int
		// want is in stdout for success, in stderr for a failure.
		want string
	}{
		{"an address without a scheme", "", []string{"list", "--addr", strings.TrimPrefix(tlsSrv.URL, "https://"), "--tls-ca", ca}, 0, "done"},
		{"an https address", "", []string{"list", "--addr", tlsSrv.URL, "--tls-ca", ca}, 0, "done"},
		{"an http address", "", []string{"start", "Greeting", "--addr", plain.URL, "--tls-ca", ca}, 2,
			"durabox start: --tls-ca is for an https host, and --addr is " + plain.URL + ", where the token and the data would travel in clear; give its https:// address, or leave out the scheme"},
		{"an http address in $DURABOX_ADDR", plain.URL, []string{"list", "--tls-ca", ca}, 2, "--addr is " + plain.URL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DURABOX_ADDR", tt.env)
			code, stdout, stderr := durabox(tt.args...)
			out := stdout
			if tt.wantCode != 0 {
				out = stderr
			}
			if code != tt.wantCode || !strings.Contains(out, tt.want) {
				t.Errorf("exit code %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, tt.wantCode, tt.want)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(inClear) > 0 {
		t.Errorf("sent in clear: %q", inClear)
	}
}
