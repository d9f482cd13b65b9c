package host

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/durabox/durabox/engine"
	"github.com/durabox/durabox/store"
)

// Host runs orchestrations from deployed modules on a store.
type Host struct{}

// Options configures a Host.
type Options struct{}

// New returns a host on st.
func New(st store.Store, opts Options) (*Host, error) { return nil, errors.New("TODO") }

// Run runs the dispatchers until ctx is done.
func (h *Host) Run(ctx context.Context) error { return errors.New("TODO") }

// Deploy validates and stores a module.
func (h *Host) Deploy(ctx context.Context, wasm []byte) (store.ModuleInfo, error) {
	return store.ModuleInfo{}, errors.New("TODO")
}

// Start starts an orchestration and returns its instance id. An empty id
// means the host picks one.
func (h *Host) Start(ctx context.Context, name string, input json.RawMessage, id string) (string, error) {
	return "", errors.New("TODO")
}

// Instance returns an instance's state.
func (h *Host) Instance(ctx context.Context, id string) (store.Instance, error) {
	return store.Instance{}, errors.New("TODO")
}

// Wait blocks until the instance reaches a terminal status or ctx is done.
func (h *Host) Wait(ctx context.Context, id string) (store.Instance, error) {
	return store.Instance{}, errors.New("TODO")
}

// History returns an instance's history.
func (h *Host) History(ctx context.Context, id string) ([]engine.Event, error) {
	return nil, errors.New("TODO")
}

// List returns instances, newest first.
func (h *Host) List(ctx context.Context) ([]store.Instance, error) { return nil, errors.New("TODO") }

// Modules returns the deployed modules, newest first.
func (h *Host) Modules(ctx context.Context) ([]store.ModuleInfo, error) {
	return nil, errors.New("TODO")
}
