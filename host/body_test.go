package host_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/durabox/durabox/host/server"
)

// pipeListener hands a server the ends of net.Pipe connections, which
// testing/synctest can wait on (unlike sockets).
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// dial connects to the server behind l.
func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

// TestStalledBody: a request whose body stops coming is answered 400 once
// nothing has come for StallTimeout, and one that trickles is answered 400
// at BodyTimeout; neither is logged as an error of the host. In fake
// time.
func TestStalledBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// send writes what the client sends after the headers, then
		// stalls.
		send        func(w io.Writer)
		contentType string
		wantElapsed time.Duration
		wantBody    string
	}{
		{
			name:        "a JSON body that stops",
			send:        func(w io.Writer) { io.WriteString(w, `{"name": "Gree`) },
			wantElapsed: 30 * time.Second,
			wantBody:    `{"error":"bad input: the request body stalled: nothing came for 30s after 14 bytes of the 100 announced"}`,
		},
		{
			name: "a body that trickles",
			send: func(w io.Writer) {
				for range 50 {
					if _, err := io.WriteString(w, " "); err != nil {
						return
					}
					// Not a divisor of 5m: no byte comes as the time runs out.
					time.Sleep(7 * time.Second)
				}
			},
			wantElapsed: 5 * time.Minute,
			wantBody:    `{"error":"bad input: the request body took longer than 5m0s: 43 bytes of the 100 announced came"}`,
		},
		{
			name:        "a multipart deployment that stops",
			contentType: "multipart/form-data; boundary=b",
			send: func(w io.Writer) {
				io.WriteString(w, "--b\r\nContent-Disposition: form-data; name=\"module\"; filename=\"m.wasm\"\r\n\r\n\x00asm")
			},
			wantElapsed: 30 * time.Second,
			wantBody:    `{"error":"bad input: the request body stalled: nothing came for 30s after 77 bytes of the 100 announced"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log bytes.Buffer
				logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
				srv := &http.Server{Handler: fixture(t).Handler(server.Options{Logger: logger})}
				ln := newPipeListener()
				go srv.Serve(ln)
				defer srv.Shutdown(context.Background())
				conn := ln.dial()
				path, contentType := "/v1/instances", "application/json"
				if tt.contentType != "" {
					path, contentType = "/v1/modules", tt.contentType
				}
				began := time.Now()
				sent := make(chan struct{})
				go func() {
					defer close(sent)
					io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: localhost\r\nContent-Type: "+contentType+"\r\nContent-Length: 100\r\n\r\n")
					tt.send(conn)
				}()
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatal(err)
				}
				if elapsed := time.Since(began); elapsed != tt.wantElapsed {
					t.Errorf("answered after %s, want %s", elapsed, tt.wantElapsed)
				}
				body, _ := io.ReadAll(resp.Body)
				conn.Close()
				<-sent
				if resp.StatusCode != 400 || string(body) != tt.wantBody+"\n" {
					t.Errorf("%d %s\nwant 400 %s", resp.StatusCode, body, tt.wantBody)
				}
				if log.Len() > 0 {
					t.Errorf("logged %q; want nothing at WARN or above", log.String())
				}
			})
		})
	}
}

// TestTruncatedBody: a request whose client stops sending before the
// length it announced is answered 400, and no error is logged.
func TestTruncatedBody(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := httptest.NewServer(fixture(t).Handler(server.Options{Logger: logger}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /v1/instances/pending/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\": \"A\"")
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	want := `{"error":"bad input: the request body ended early, after 12 bytes of the 100 announced"}` + "\n"
	if resp.StatusCode != 400 || string(body) != want {
		t.Errorf("%d %s\nwant 400 %s", resp.StatusCode, body, want)
	}
	if strings.Contains(log.String(), "ERROR") {
		t.Errorf("logged %q; want no error", log.String())
	}
}
