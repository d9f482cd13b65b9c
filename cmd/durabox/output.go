package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// printJSON prints v as indented JSON, for --json.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// newTable returns a writer that aligns tab-separated columns; flush it.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// timeText shows a time to people: in UTC, to the millisecond.
func timeText(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// jsonText shows a JSON value on one line.
func jsonText(v json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil || b.Len() == 0 {
		return string(v)
	}
	return b.String()
}

// shortHash shows a module's hash to people.
func shortHash(hash string) string { return hash[:min(len(hash), 12)] }

// names shows a list of names to people.
func names(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
