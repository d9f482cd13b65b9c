package bundle

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durabox/durabox/engine"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sample() *Bundle {
	return &Bundle{
		InstanceID: "order-7", Name: "Order", Status: engine.StatusRunning, Input: json.RawMessage(`{"n":2}`),
		Module: []byte("\x00asm module bytes"), ModuleHash: sum([]byte("\x00asm module bytes")),
		Executions: []Execution{
			{Number: 1, Seed: [32]byte{1}, History: []engine.Event{
				{ID: 1, Kind: engine.OrchestrationStarted, Time: t0, Name: "Order", InstanceID: "order-7", Input: json.RawMessage(`{"n":1}`)},
				{ID: 2, Kind: engine.OrchestrationContinuedAsNew, Time: t0, Input: json.RawMessage(`{"n":2}`)},
			}},
			{Number: 2, Seed: [32]byte{2}, History: []engine.Event{
				{ID: 1, Kind: engine.OrchestrationStarted, Time: t0, Name: "Order", InstanceID: "order-7", Input: json.RawMessage(`{"n":2}`)},
				{ID: 2, Kind: engine.ActivityScheduled, Time: t0, Name: "Charge", Input: json.RawMessage(`{"cents":[1,2]}`)},
			}},
		},
		ExportedAt: t0,
	}
}

func write(t *testing.T, b *Bundle) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func read(raw []byte) (*Bundle, error) { return Read(bytes.NewReader(raw), int64(len(raw))) }

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	want := sample()
	got, err := read(write(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back:\n%+v\nwant\n%+v", got, want)
	}
}

// rezip rewrites a bundle's archive, changing each entry with edit.
func rezip(t *testing.T, raw []byte, edit func(name string, body []byte) []byte) []byte {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := zip.NewWriter(&out)
	for _, f := range z.File {
		body, err := readPart(map[string]*zip.File{f.Name: f}, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if body = edit(f.Name, body); body == nil {
			continue
		}
		fw, _ := w.Create(f.Name)
		fw.Write(body)
	}
	w.Close()
	return out.Bytes()
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	good := write(t, sample())
	// A flipped byte inside a deflated entry: zip's CRC-32 catches it.
	flipped := bytes.Clone(good)
	i := bytes.Index(flipped, []byte("module.wasm")) + 40
	flipped[i] ^= 0xff
	tests := []struct {
		name   string
		raw    []byte
		wantIs error
		want   string
	}{
		{"not a zip", []byte("#!/bin/sh\n"), ErrNotBundle, "bundle: not a Durabox repro bundle: it is not a zip archive"},
		{"a zip without a manifest", rezip(t, good, func(name string, b []byte) []byte {
			if name == manifestFile {
				return nil
			}
			return b
		}), ErrNotBundle, "bundle: not a Durabox repro bundle: the archive has no manifest.json"},
		{"a newer format", rezip(t, good, func(name string, b []byte) []byte {
			if name == manifestFile {
				return bytes.Replace(b, []byte(`"version": 1`), []byte(`"version": 2`), 1)
			}
			return b
		}), ErrNewer, "bundle: format too new: it is format version 2, and this durabox reads up to version 1; read it with a newer durabox"},
		{"a history changed", rezip(t, good, func(name string, b []byte) []byte {
			if name == "history/2.json" {
				return bytes.Replace(b, []byte(`"Charge"`), []byte(`"Refund"`), 1)
			}
			return b
		}), ErrCorrupt, "bundle: corrupted: history/2.json has sha256 "},
		{"the module missing", rezip(t, good, func(name string, b []byte) []byte {
			if name == moduleFile {
				return nil
			}
			return b
		}), ErrCorrupt, "bundle: corrupted: the archive lacks module.wasm"},
		{"a byte flipped", flipped, ErrCorrupt, "bundle: corrupted: "},
		{"truncated", good[:len(good)/2], ErrNotBundle, "bundle: not a Durabox repro bundle: it is not a zip archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(tt.raw)
			if !errors.Is(err, tt.wantIs) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant one starting %q", err, tt.want)
			}
		})
	}
}

func TestReadHistory(t *testing.T) {
	t.Parallel()
	// As durabox history --json prints it: indented, JSON values indented
	// too.
	indented := `{
  "events": [
    {"id": 1, "kind": "OrchestrationStarted", "time": "2026-01-02T03:04:05Z", "name": "Order", "input": {
        "n": 1
      }},
    {"id": 2, "kind": "ActivityScheduled", "time": "2026-01-02T03:04:05Z", "name": "Charge", "input": [1, 2]}
  ]
}`
	events, err := ReadHistory([]byte(indented))
	if err != nil {
		t.Fatal(err)
	}
	if string(events[0].Input) != `{"n":1}` || string(events[1].Input) != `[1,2]` {
		t.Fatalf("inputs %s and %s; want them compact", events[0].Input, events[1].Input)
	}
	for _, tt := range []struct{ name, in, want string }{
		{"status, not history", `{"id": "order-7", "status": "Running"}`, `json: unknown field "id"`},
		{"no events", `{}`, `it has no "events"`},
		{"a gap", `{"events": [{"id": 1, "kind": "OrchestrationStarted", "time": "2026-01-02T03:04:05Z"}, {"id": 3, "kind": "TimerFired", "time": "2026-01-02T03:04:05Z"}]}`, "event 2 of the history has id 3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ReadHistory([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}
