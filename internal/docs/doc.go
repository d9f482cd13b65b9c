// Package docs reads the project's Markdown documents for the tests that
// hold them to the code: the links of every document resolve, README.md
// stays a short map, the API reference is the OpenAPI document's, the
// metrics table lists the metrics the host serves, the current table of
// BENCHMARKS.md quotes figures its sections report, every make command
// a document gives names a target of the Makefile, docs/testing.md names
// the packages make check tests, and (in
// cmd/durabox, which holds the command table) every flag, default and
// command list a document gives is the command line's.
//
// Read parses a document with goldmark into what those tests look at: its
// headings (and the anchors GitHub gives them), its links, its code (each
// code span and each line of each code block) and its text (each
// paragraph, heading or table cell on one line, code spans kept between
// backticks), each with the line it starts on.
package docs
