// Package ijson checks that JSON entering the host is I-JSON (RFC 7493),
// the one rule every path applies: requests, activity results, and what
// an orchestration's commands carry.
package ijson

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/durabox/durabox/abi"
)

// Check returns an error, naming what data is ("the input"), unless
// data is I-JSON (RFC 7493): JSON in valid UTF-8, whose escapes decode to
// Unicode characters (no lone surrogate such as \ud800), and whose objects
// name no member twice. Every JSON value that enters the host passes it:
// inputs and event data from clients, activity outputs, and what an
// orchestration's commands carry. encoding/json would take all three
// (turning the first two into U+FFFD, keeping the last of two members), so
// a value would be stored as one thing and read as another, and JSON
// holding invalid UTF-8 would be served as it is, which is not JSON. See
// RATIONALE.md, "Why are names, texts and JSON refused at the boundary?".
func Check(what string, data []byte) error {
	if jsontext.Value(data).IsValid() {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	_, err := dec.ReadValue()
	if err == nil {
		_, err = dec.ReadToken()
	}
	return fmt.Errorf("%s is not I-JSON (RFC 7493): %s", what, jsonProblem(err))
}

// jsonProblem says what a jsontext decoder's error found, without echoing
// more than a bounded part of the value.
func jsonProblem(err error) string {
	var syntax *jsontext.SyntacticError
	switch {
	case errors.As(err, &syntax) && syntax.Err == jsontext.ErrDuplicateName:
		return fmt.Sprintf("the name %s appears twice in one object", abi.Quote(syntax.JSONPointer.LastToken()))
	case errors.As(err, &syntax):
		return fmt.Sprintf("%v at byte %d", syntax.Err, syntax.ByteOffset)
	case err == io.EOF:
		return "it is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends early"
	}
	return err.Error()
}
