package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/host"
	"github.com/durabox/durabox/host/server"
	"github.com/durabox/durabox/store"
	"github.com/durabox/durabox/store/sqlite"
)

// storeOldInstance writes, through the store, the completed instance "old"
// as a host that refused nothing could have left it: its name, input,
// custom status and result hold bytes that are not UTF-8.
func storeOldInstance(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	const hash = "0ld"
	if err := st.PutModule(ctx, store.Module{Hash: hash, Wasm: []byte("\x00asm old"), Orchestrations: []string{"Old\xff"}, DeployedAt: now}); err != nil {
		t.Fatal(err)
	}
	input := json.RawMessage("\"in\xff\"")
	if err := st.CreateInstance(ctx, store.NewInstance{ID: "old", Name: "Old\xff", ModuleHash: hash, Input: input, Now: now}); err != nil {
		t.Fatal(err)
	}
	items, err := st.LockNextInstances(ctx, now, time.Minute, 1, nil)
	if err != nil || len(items) != 1 {
		t.Fatalf("lock: %v, %v", items, err)
	}
	result, status := json.RawMessage("\"caf\xe9\""), "status \xff"
	c := store.TurnCommit{
		InstanceID: "old", ExecutionID: 1, LockToken: items[0].LockToken, Now: now,
		NewEvents: []engine.Event{
			{ID: 1, Kind: engine.OrchestrationStarted, Time: now, Name: "Old\xff", InstanceID: "old", Input: input},
			{ID: 2, Kind: engine.CustomStatusSet, Time: now, CustomStatus: status},
			{ID: 3, Kind: engine.OrchestrationCompleted, Time: now, Result: result},
		},
		Status: engine.StatusCompleted, Result: result, CustomStatus: &status,
	}
	for _, m := range items[0].Messages {
		c.Consumed = append(c.Consumed, m.ID)
	}
	if err := st.CommitTurn(ctx, c); err != nil {
		t.Fatal(err)
	}
}

// TestJSONOfWhatAnOlderHostStored serves an instance whose stored data
// holds bytes that are not UTF-8, as an older host may have left it: the
// API, status --json and history --json all answer JSON, with each run of
// such bytes as U+FFFD.
func TestJSONOfWhatAnOlderHostStored(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "durabox.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	storeOldInstance(t, st)
	h, err := host.New(st, host.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	handler, err := server.New(h, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	defer srv.Close()
	checkJSON := func(what, out string) {
		t.Helper()
		if !utf8.ValidString(out) || !json.Valid([]byte(out)) {
			t.Errorf("%s is not JSON:\n%q", what, out)
		} else if !strings.Contains(out, `"caf`+"\uFFFD"+`"`) {
			t.Errorf("%s does not show the result as \"caf\uFFFD\":\n%s", what, out)
		}
	}
	for _, path := range []string{"/v1/instances/old", "/v1/instances/old/history"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checkJSON("GET "+path, string(body))
	}
	for _, command := range []string{"status", "history"} {
		code, stdout, stderr := durabox(command, "--addr", srv.URL, "--json", "old")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", command, code, stderr)
		}
		checkJSON(command+" --json", stdout)
	}
}
