package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/internal/guestbuild"
	"github.com/durabox/durabox/internal/logbuf"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// stallingStore stalls the calls of one method until their context is
// done, then makes them: a host stopped while such a call was under way.
// With fail set, the method fails with it instead, at once.
type stallingStore struct {
	store.Store
	method  string
	fail    error
	once    sync.Once
	reached chan struct{}
}

// stall stalls a call of method, and reports the error it must fail with
// (nil: none).
func (s *stallingStore) stall(ctx context.Context, method string) error {
	if method != s.method || ctx.Done() == nil {
		return nil
	}
	s.once.Do(func() { close(s.reached) })
	if s.fail != nil {
		return s.fail
	}
	<-ctx.Done()
	return nil
}

func (s *stallingStore) CommitTurn(ctx context.Context, c store.TurnCommit) error {
	if err := s.stall(ctx, "CommitTurn"); err != nil {
		return err
	}
	return s.Store.CommitTurn(ctx, c)
}

func (s *stallingStore) History(ctx context.Context, id string, execution int64) ([]engine.Event, error) {
	if err := s.stall(ctx, "History"); err != nil {
		return nil, err
	}
	return s.Store.History(ctx, id, execution)
}

func (s *stallingStore) CompleteActivity(ctx context.Context, w *store.ActivityWork, result engine.Event, now time.Time) error {
	if err := s.stall(ctx, "CompleteActivity"); err != nil {
		return err
	}
	return s.Store.CompleteActivity(ctx, w, result, now)
}

func (s *stallingStore) ModulesWithWork(ctx context.Context) ([]string, error) {
	if err := s.stall(ctx, "ModulesWithWork"); err != nil {
		return nil, err
	}
	return s.Store.ModulesWithWork(ctx)
}

// TestNormalStopLogsNoError: a host stopped while it is busy (its context
// ends while a turn commits or reads its history, an activity's result is
// recorded, the modules with work are listed, an upgrade replays, or while
// many instances run) logs nothing at WARN or ERROR: what the stop cut
// short is no failure, and runs again at the next start. A store that
// really fails is still an error.
func TestNormalStopLogsNoError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		// method is the store's method under way when the host stops; fail,
		// when set, is the error it fails with instead, at once.
		method string
		fail   error
		opts   host.Options
		// start makes the host busy, with the handler that serves it
		// and the context of its requests, and returns what waits for the
		// requests it made to end (nil: none).
		start func(t *testing.T, h *testHost, handler http.Handler, requests context.Context) (wait func())
		// want is in the log; an ERROR or WARN line is not, unless
		// wantError.
		want      string
		wantError bool
	}{
		{name: "many instances running", start: greetings(20)},
		{name: "a turn's commit", method: "CommitTurn", start: greetings(1), want: "level=INFO msg=\"turn not committed: the host is stopping; it runs again at the next start\""},
		{name: "a turn's history read", method: "History", opts: host.Options{NoLiveCache: true}, start: greetings(1), want: "level=INFO msg=\"turn not run: the host is stopping; it runs again at the next start\""},
		// store/sqlite keeps a result in memory, whatever its context.
		{name: "the recording of an activity's result", method: "CompleteActivity", start: greetings(1)},
		{name: "the listing of the modules with work", method: "ModulesWithWork", start: func(*testing.T, *testHost, http.Handler, context.Context) func() { return nil }},
		{name: "an upgrade", method: "History", start: upgrading, want: "level=INFO msg=\"upgrade stopped: its request ended (the host is stopping, or the client went away)\""},
		{name: "a commit that fails", method: "CommitTurn", fail: errors.New("the disk is on fire"), start: greetings(1),
			want: "level=ERROR msg=\"turn not committed; it will run again\"", wantError: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &logbuf.Buffer{}
			logger := slog.New(slog.NewTextHandler(log, nil))
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			stalling := &stallingStore{Store: st, method: tt.method, fail: tt.fail, reached: make(chan struct{})}
			tt.opts.Logger, tt.opts.CacheDir = logger, host.TestCacheDir
			h, err := host.New(stalling, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			handler, err := server.New(h, server.Options{Metrics: h.Metrics(), Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- h.Run(runCtx) }()
			wait := tt.start(t, &testHost{Host: h, st: st}, handler, runCtx)
			if tt.method != "" {
				select {
				case <-stalling.reached:
				case <-time.After(time.Minute):
					t.Fatalf("no call of %s within a minute", tt.method)
				}
			}
			stop()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Minute):
				t.Fatal("Run did not return within a minute of its stop")
			}
			if wait != nil {
				wait()
			}
			text := log.String()
			if !strings.Contains(text, tt.want) {
				t.Errorf("the log lacks %s:\n%s", tt.want, text)
			}
			if bad := grep(text, "level=ERROR") + grep(text, "level=WARN"); bad != "" && !tt.wantError {
				t.Errorf("a normal stop logged:\n%s", bad)
			}
		})
	}
}

// greetings returns a start that deploys hello and starts n Greetings,
// and waits for the first to complete when there are several.
func greetings(n int) func(t *testing.T, h *testHost, _ http.Handler, _ context.Context) func() {
	return func(t *testing.T, h *testHost, _ http.Handler, _ context.Context) func() {
		h.deploy(t, "examples/wasm/hello")
		var ids []string
		for i := range n {
			id := fmt.Sprintf("g%d", i)
			if _, err := h.Start(context.Background(), "Greeting", json.RawMessage(`"world"`), id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if n > 1 {
			h.wait(t, ids[0])
		}
		return nil
	}
}

// upgrading starts a dry run of an upgrade through the handler, on a
// request that ends when the host stops (as durabox serve's do).
func upgrading(t *testing.T, h *testHost, handler http.Handler, requests context.Context) (wait func()) {
	wasm, err := guestbuild.Wasm(versionsPkg)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := h.Deploy(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	h.startFlow(t, "flow", `"x"`)
	h.atFirst(t, "flow")
	v2 := h.deploy(t, versionsPkg, "main.version=v2")
	body := fmt.Sprintf(`{"from": %q, "to": %q, "dryRun": true}`, v1.Hash, v2.Hash)
	req := httptest.NewRequestWithContext(requests, "POST", "http://127.0.0.1/v1/upgrades", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		handler.ServeHTTP(httptest.NewRecorder(), req)
	}()
	return func() { <-answered }
}
