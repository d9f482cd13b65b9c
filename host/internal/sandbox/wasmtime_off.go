//go:build nowasmtime

package sandbox

import (
	"context"
	"errors"
)

// NewWasmtime is not in a binary built with the nowasmtime tag (which
// leaves out wasmtime-go, its cgo and its static library).
func NewWasmtime(context.Context, Options) (Runtime, error) {
	return nil, errors.New("sandbox: this durabox was built without wasmtime (go build -tags nowasmtime); build it without the tag, or run --runtime wazero")
}
