// Package bundle reads and writes Durabox repro bundles: one file that
// holds everything needed to replay an orchestration instance anywhere, with
// no host and no database: the module it runs on, the history of every
// execution, its input and each execution's random seed.
//
//	durabox export ID -o case.dbx     # on the host's machine
//	durabox replay case.dbx           # on any machine
//
// The format is a zip archive, versioned and specified in FORMAT.md beside
// this file. Read refuses, naming the problem, a file that is not a bundle,
// a bundle whose parts do not match their checksums (corrupted), and a
// bundle of a format version newer than Version.
package bundle

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"time"

	"github.com/durabox/durabox/engine"
)

// Version is the format version this package writes and the newest it
// reads.
const Version = 1

// format names the format in the manifest.
const format = "durabox-bundle"

// Sentinel errors; Read wraps them with the specifics.
var (
	// ErrNotBundle is returned when the bytes are not a repro bundle.
	ErrNotBundle = errors.New("bundle: not a Durabox repro bundle")
	// ErrCorrupt is returned when a part of a bundle is missing or does
	// not match its checksum.
	ErrCorrupt = errors.New("bundle: corrupted")
	// ErrNewer is returned for a bundle of a newer format version.
	ErrNewer = errors.New("bundle: format too new")
)

// Bundle is an instance, with what replaying it needs.
type Bundle struct {
	// InstanceID and Name are the instance's id and orchestration.
	InstanceID string
	Name       string
	// Status is the instance's status when it was exported.
	Status engine.Status
	// Input is the current execution's input.
	Input json.RawMessage
	// Module is the wasm of the module the instance ran on when exported,
	// and ModuleHash its hex sha256.
	Module     []byte
	ModuleHash string
	// Executions are every execution of the instance, oldest first; the
	// last is the current one.
	Executions []Execution
	// ExportedAt is when the bundle was made.
	ExportedAt time.Time
}

// Execution is one execution's history and random seed.
type Execution struct {
	// Number is the execution's number, from 1.
	Number int64
	// Seed is the seed of the random stream its orchestration draws from.
	Seed [32]byte
	// History is its history, from event 1.
	History []engine.Event
}

// manifest is manifest.json, as FORMAT.md specifies it.
type manifest struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	InstanceID string          `json:"instanceId"`
	Name       string          `json:"name"`
	Status     engine.Status   `json:"status"`
	Input      json.RawMessage `json:"input,omitempty"`
	Module     part            `json:"module"`
	Executions []execution     `json:"executions"`
	ExportedAt time.Time       `json:"exportedAt"`
}

// part names a file of the archive and its hex sha256.
type part struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

type execution struct {
	Number  int64  `json:"number"`
	Seed    string `json:"seed"`
	Events  int    `json:"events"`
	History part   `json:"history"`
}

// history is the form of a history file: the JSON of durabox history
// --json.
type history struct {
	Events []engine.Event `json:"events"`
}

const (
	manifestFile = "manifest.json"
	moduleFile   = "module.wasm"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Write writes b to w as a bundle of the current format version.
func Write(w io.Writer, b *Bundle) error {
	z := zip.NewWriter(w)
	m := manifest{Format: format, Version: Version, InstanceID: b.InstanceID, Name: b.Name, Status: b.Status, Input: b.Input,
		Module: part{File: moduleFile, SHA256: sum(b.Module)}, ExportedAt: b.ExportedAt.UTC()}
	files := map[string][]byte{moduleFile: b.Module}
	for _, x := range b.Executions {
		events := x.History
		if events == nil {
			events = []engine.Event{}
		}
		body, err := HistoryJSON(events)
		if err != nil {
			return fmt.Errorf("bundle: execution %d: %w", x.Number, err)
		}
		name := path.Join("history", strconv.FormatInt(x.Number, 10)+".json")
		files[name] = body
		m.Executions = append(m.Executions, execution{Number: x.Number, Seed: hex.EncodeToString(x.Seed[:]), Events: len(x.History), History: part{File: name, SHA256: sum(body)}})
	}
	man, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("bundle: manifest: %w", err)
	}
	// The manifest first, so a reader learns the version before anything.
	order := []string{manifestFile, moduleFile}
	files[manifestFile] = append(man, '\n')
	for _, x := range m.Executions {
		order = append(order, x.History.File)
	}
	for _, name := range order {
		f, err := z.Create(name)
		if err != nil {
			return fmt.Errorf("bundle: %s: %w", name, err)
		}
		if _, err := f.Write(files[name]); err != nil {
			return fmt.Errorf("bundle: %s: %w", name, err)
		}
	}
	if err := z.Close(); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

// HistoryJSON encodes a history as durabox history --json prints it, but an
// event a line: indenting would reformat the JSON values inside events,
// whose bytes a replay compares.
func HistoryJSON(events []engine.Event) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\"events\": [")
	for i, ev := range events {
		line, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", ev.ID, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  ")
		b.Write(line)
	}
	b.WriteString("\n]}\n")
	return b.Bytes(), nil
}

// ReadHistory reads a history in the form durabox history --json prints
// (indented or not: the JSON values inside events are compacted back to
// the form the host recorded them in).
func ReadHistory(b []byte) ([]engine.Event, error) {
	var h history
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("not a history such as durabox history --json prints: %w", err)
	}
	if h.Events == nil {
		return nil, errors.New(`not a history such as durabox history --json prints: it has no "events"`)
	}
	for i := range h.Events {
		ev := &h.Events[i]
		for _, raw := range []*json.RawMessage{&ev.Input, &ev.Result} {
			var err error
			if *raw, err = compact(*raw); err != nil {
				return nil, fmt.Errorf("event %d: %w", ev.ID, err)
			}
		}
		if want := int64(i + 1); ev.ID != want {
			return nil, fmt.Errorf("event %d of the history has id %d; a history numbers its events 1, 2, 3, …", want, ev.ID)
		}
	}
	return h.Events, nil
}

// compact removes the insignificant space from a JSON value (none: nil).
func compact(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return nil, err
	}
	return c.Bytes(), nil
}

// Read reads a bundle of at most size bytes.
func Read(r io.ReaderAt, size int64) (*Bundle, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("%w: it is not a zip archive (%v)", ErrNotBundle, err)
	}
	files := map[string]*zip.File{}
	for _, f := range z.File {
		files[f.Name] = f
	}
	raw, err := readPart(files, manifestFile)
	if errors.Is(err, errMissing) {
		return nil, fmt.Errorf("%w: the archive has no %s", ErrNotBundle, manifestFile)
	}
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.Format != format {
		return nil, fmt.Errorf("%w: its %s does not say \"format\": %q", ErrNotBundle, manifestFile, format)
	}
	if m.Version > Version {
		return nil, fmt.Errorf("%w: it is format version %d, and this durabox reads up to version %d; read it with a newer durabox", ErrNewer, m.Version, Version)
	}
	if m.Version < 1 {
		return nil, fmt.Errorf("%w: its format version is %d", ErrCorrupt, m.Version)
	}
	b := &Bundle{InstanceID: m.InstanceID, Name: m.Name, Status: m.Status, ModuleHash: m.Module.SHA256, ExportedAt: m.ExportedAt}
	if b.Input, err = compact(m.Input); err != nil {
		return nil, fmt.Errorf("%w: the input: %v", ErrCorrupt, err)
	}
	if b.Module, err = readChecked(files, m.Module); err != nil {
		return nil, err
	}
	for _, x := range m.Executions {
		body, err := readChecked(files, x.History)
		if err != nil {
			return nil, err
		}
		events, err := ReadHistory(body)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, x.History.File, err)
		}
		seed, err := hex.DecodeString(x.Seed)
		if err != nil || len(seed) != 32 || len(events) != x.Events {
			return nil, fmt.Errorf("%w: execution %d: the seed or the number of events does not match the manifest", ErrCorrupt, x.Number)
		}
		e := Execution{Number: x.Number, History: events}
		copy(e.Seed[:], seed)
		b.Executions = append(b.Executions, e)
	}
	if len(b.Executions) == 0 {
		return nil, fmt.Errorf("%w: it holds no execution", ErrCorrupt)
	}
	return b, nil
}

var errMissing = errors.New("missing")

// readPart reads a file of the archive; zip checks its CRC-32.
func readPart(files map[string]*zip.File, name string) ([]byte, error) {
	f, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, errMissing)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	return b, nil
}

// readChecked reads a part and checks its sha256.
func readChecked(files map[string]*zip.File, p part) ([]byte, error) {
	b, err := readPart(files, p.File)
	if errors.Is(err, errMissing) {
		return nil, fmt.Errorf("%w: the archive lacks %s", ErrCorrupt, p.File)
	}
	if err != nil {
		return nil, err
	}
	if got := sum(b); got != p.SHA256 {
		return nil, fmt.Errorf("%w: %s has sha256 %s, and the manifest says %s", ErrCorrupt, p.File, got, p.SHA256)
	}
	return b, nil
}
